package bmc

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		address string
		want    Access
		err     string
	}{
		{address: "redfish://10.0.0.1/redfish/v1/Systems/1", want: Access{Redfish, "https://10.0.0.1", "/redfish/v1/Systems/1"}},
		{address: "redfish+http://127.0.0.1:8000/redfish/v1/Systems/node-1/", want: Access{Redfish, "http://127.0.0.1:8000", "/redfish/v1/Systems/node-1"}},
		{address: "redfish+https://bmc.example:8443", want: Access{Redfish, "https://bmc.example:8443", ""}},
		{address: "redfish-virtualmedia://[fd00::1]:443/redfish/v1/Systems/a", want: Access{RedfishVirtualMedia, "https://[fd00::1]:443", "/redfish/v1/Systems/a"}},
		{address: "redfish-virtualmedia+http://h:1/redfish/v1/Systems/x", want: Access{RedfishVirtualMedia, "http://h:1", "/redfish/v1/Systems/x"}},
		{address: "REDFISH+HTTP://h/redfish/v1/Systems/x", want: Access{Redfish, "http://h", "/redfish/v1/Systems/x"}},
		{address: "ipmi://192.168.111.1:6230", err: `scheme "ipmi" is not supported (no Ironic here): use one of redfish://`},
		{address: "idrac-virtualmedia://h/redfish/v1/Systems/1", err: `scheme "idrac-virtualmedia" is not supported`},
		{address: "", err: "empty"},
		{address: "10.0.0.1", err: "has no scheme"},
		{address: "redfish+http:///redfish/v1/Systems/1", err: "has no host"},
		{address: "redfish+http://admin:hunter2@h/redfish/v1/Systems/1", err: "carries credentials"},
		{address: "redfish+http://h/x?y=1", err: "query or fragment"},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			got, err := Parse(tt.address)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse() error %v, want one containing %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(): %v", err)
			}
			if got != tt.want {
				t.Fatalf("Parse() = %+v, want %+v", got, tt.want)
			}
			if got.VirtualMedia() != (tt.want.Driver == RedfishVirtualMedia) {
				t.Fatal("VirtualMedia() disagrees with the driver")
			}
		})
	}
}
