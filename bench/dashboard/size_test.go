package dashboard

import (
	"encoding/json"
	"testing"
)

// TestHostSize checks a generated host is the size of a real one: 2 to 4
// KiB of JSON with its status, before the API server adds its metadata.
func TestHostSize(t *testing.T) {
	for _, i := range []int{0, 3, 9999} {
		h, st := bareMetalHost(i)
		h.Status = st
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("host %d: %d bytes", i, len(b))
		if len(b) < 2<<10 || len(b) > 4<<10 {
			t.Errorf("host %d: %d bytes of JSON, want 2 to 4 KiB", i, len(b))
		}
	}
}
