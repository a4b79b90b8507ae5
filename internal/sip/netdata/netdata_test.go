package netdata

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, doc string
		want      map[string]string
		err       string
	}{
		{
			name: "metal3 json",
			doc:  `{"links":[{"id":"enp1s0","type":"phy"}],"networks":[{"id":"oam-ipv4","link":"enp1s0","type":"ipv4","ip_address":"10.23.25.101","netmask":"255.255.255.0"}],"services":[]}`,
			want: map[string]string{"oam-ipv4": "10.23.25.101", "enp1s0": "10.23.25.101"},
		},
		{
			name: "yaml with a prefix and a dhcp network",
			doc:  "networks:\n- id: pxe\n  link: eno1\n  type: ipv4_dhcp\n- id: oam-ipv6\n  link: eno2\n  ip_address: fd00::5/64\n",
			want: map[string]string{"oam-ipv6": "fd00::5", "eno2": "fd00::5"},
		},
		{name: "malformed", doc: `{"networks": [`, err: "not a network_data.json document"},
		{name: "empty", doc: "  ", err: "networkData is empty"},
		{name: "bad address", doc: `{"networks":[{"id":"oam","ip_address":"ten.0.0.1"}]}`, err: `networks[0] (id "oam"): ip_address "ten.0.0.1" is not an IP address`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.doc))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}
