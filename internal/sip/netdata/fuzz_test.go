package netdata

import (
	"maps"
	"net/netip"
	"strings"
	"testing"
)

// maxErrorLen bounds Parse's error: it becomes a condition message, which
// the API server refuses beyond 32768 characters.
const maxErrorLen = 1024

// FuzzParse feeds Parse arbitrary documents (a host's networkData Secret is
// outside input): it never panics, its errors stay short, and what it
// returns is deterministic, every value a canonical IP address under a
// non-empty key.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"links":[{"id":"enp1s0","type":"phy"}],"networks":[{"id":"oam-ipv4","link":"enp1s0","type":"ipv4","ip_address":"10.23.25.101","netmask":"255.255.255.0"}],"services":[]}`))
	f.Add([]byte("networks:\n- id: pxe\n  link: eno1\n  type: ipv4_dhcp\n- id: oam-ipv6\n  link: eno2\n  ip_address: fd00::5/64\n"))
	f.Add([]byte(`{"networks":[{"id":"oam","ip_address":"ten.0.0.1"}]}`))
	f.Add([]byte(`{"networks":[{"id":"a","ip_address":"::ffff:10.0.0.1%eth0"}]}`))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Add([]byte(`{"networks": [`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse(data)
		again, err2 := Parse(data)
		if (err == nil) != (err2 == nil) || !maps.Equal(got, again) {
			t.Fatalf("not deterministic: %v %v / %v %v", got, err, again, err2)
		}
		if err != nil {
			if n := len(err.Error()); n > maxErrorLen {
				t.Fatalf("error of %d characters: %.200s...", n, err)
			}
			return
		}
		for k, v := range got {
			if k == "" {
				t.Errorf("empty key for %q", v)
			}
			a, perr := netip.ParseAddr(v)
			if perr != nil || a.String() != v {
				t.Errorf("%s = %q: not a canonical IP address", k, v)
			}
		}
	})
}

// TestParseQuotesBounded: a hostile document's long id or address is cut in
// the error, which ends up in the cluster's Ready condition.
func TestParseQuotesBounded(t *testing.T) {
	long := strings.Repeat("x", 100000)
	tests := []struct{ name, doc string }{
		{"long address", `{"networks":[{"id":"oam","ip_address":"` + long + `"}]}`},
		{"long id", `{"networks":[{"id":"` + long + `","ip_address":"nope"}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil {
				t.Fatal("no error")
			}
			if len(err.Error()) > maxErrorLen {
				t.Errorf("error of %d characters", len(err.Error()))
			}
		})
	}
}
