package harness

import (
	"os"
	"testing"
	"time"
)

// TestCPUSeconds reads this process's CPU time, which grows as it works.
func TestCPUSeconds(t *testing.T) {
	before, err := CPUSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	after, err := CPUSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after <= before || after-before > 10 {
		t.Errorf("CPU seconds %v then %v (x=%d): want a small increase", before, after, x)
	}
	if _, err := CPUSeconds(-1); err == nil {
		t.Error("CPUSeconds(-1): want an error")
	}
}
