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
		// Any '@' is taken for the end of user information.
		{address: "redfish://h/redfish/v1/Systems/a@b", err: "carries credentials"},
		{address: "redfish://admin:hunter2/x@h/redfish/v1/Systems/1", err: "carries credentials"},
		{address: "redfish://admin:hunt@er2@h/redfish/v1/Systems/1", err: "carries credentials"},
		{address: "ipmi://192.168.111.1:6230", err: `scheme "ipmi" is not supported (no Ironic here): use one of redfish://`},
		{address: "idrac-virtualmedia://h/redfish/v1/Systems/1", err: `scheme "idrac-virtualmedia" is not supported`},
		{address: "", err: "empty"},
		{address: "10.0.0.1", err: "has no scheme"},
		{address: "redfish+http:///redfish/v1/Systems/1", err: "redfish+http:///redfish/v1/Systems/1 has no host"},
		{address: "redfish+http://h/x?y=1", err: "redfish+http://h/x?REDACTED: a query or fragment is not allowed"},
		// Credentials, wherever they are, are never repeated: the tests
		// below check no error holds "hunter2".
		{address: "redfish+http://admin:hunter2@h/redfish/v1/Systems/1", err: "carries credentials"},
		{address: "admin:hunter2@10.0.0.1", err: "the BMC address has no scheme"},
		{address: "admin:hunter2@10.0.0.1/redfish/v1/Systems/1", err: "the BMC address has no scheme"},
		{address: "admin:hunter2@h://x", err: "the BMC address has no scheme"},
		{address: "redfish://admin:hun?ter2@h/redfish/v1/Systems/1", err: "carries credentials"},
		{address: "redfish://admin:hun#ter2@h/redfish/v1/Systems/1", err: "carries credentials"},
		{address: "redfish://admin:hunter2/redfish/v1/Systems/1", err: `BMC address of scheme "redfish" is not a valid URL`},
		{address: "redfish+http://h/redfish/v1/Systems/1?password=hunter2", err: "redfish+http://h/redfish/v1/Systems/1?REDACTED: a query"},
		{address: "redfish+http://h/redfish/v1/Systems/1#hunter2", err: "redfish+http://h/redfish/v1/Systems/1#REDACTED: a query"},
		{address: "redfish+http://h?password=hunter2", err: "redfish+http://h?REDACTED: a query"},
		{address: "redfish+http:///x?password=hunter2", err: "redfish+http:///x?REDACTED has no host"},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			got, err := Parse(tt.address)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse() error %v, want one containing %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "hun") {
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

func TestRedact(t *testing.T) {
	tests := map[string]string{
		"redfish+http://h:8000/redfish/v1/Systems/1":            "redfish+http://h:8000/redfish/v1/Systems/1",
		"redfish://admin:hunter2@h/redfish/v1/Systems/1":        "redfish://admin:REDACTED@h/redfish/v1/Systems/1",
		"redfish://admin:p@ss@h":                                "redfish://admin:REDACTED@h",
		"redfish://admin:hun?ter2@h/x":                          "redfish://REDACTED",
		"redfish://admin:hunter2/x@h/redfish/v1/Systems/1":      "redfish://admin:REDACTED@h/redfish/v1/Systems/1",
		"redfish://h/redfish/v1/Systems/a@b":                    "redfish://REDACTED@b",
		"redfish://h/x?password=hunt@er2":                       "redfish://REDACTED",
		"redfish://admin:hunter2@h/x?y=hunter2":                 "redfish://admin:REDACTED@h/x?REDACTED",
		"redfish://h/redfish/v1/Systems/1?password=hunter2":     "redfish://h/redfish/v1/Systems/1?REDACTED",
		"redfish://h/redfish/v1/Systems/1#hunter2":              "redfish://h/redfish/v1/Systems/1#REDACTED",
		"redfish://h?password=hunter2":                          "redfish://h?REDACTED",
		"10.0.0.1:623":                                          "10.0.0.1:623",
		"admin:hunter2@10.0.0.1":                                "admin:REDACTED@10.0.0.1",
		"admin:hunter2@10.0.0.1/redfish/v1/Systems/1?x=hunter2": "admin:REDACTED@10.0.0.1/redfish/v1/Systems/1?REDACTED",
		"admin:hunter2@h://x":                                   "admin:REDACTED@h://x",
		"":                                                      "",
	}
	for in, want := range tests {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParse: whatever the scheme, host and path, an error never repeats a
// secret put in the user information, the query or the fragment, with or
// without a scheme; neither does Redact.
func FuzzParse(f *testing.F) {
	f.Add("redfish+http", "h:8000", "redfish/v1/Systems/1", "pw")
	f.Add("ipmi", "10.0.0.1", "", "")
	f.Add("redfish", "", "x", "p?w#d")
	f.Add("redfish", "a:b", "%zz", "/@")
	f.Fuzz(func(t *testing.T, scheme, host, path, secret string) {
		const marker = "Zq9xW"
		if strings.Contains(scheme+host+path, marker) {
			return
		}
		secret = marker + secret
		for _, address := range []string{
			scheme + "://admin:" + secret + "@" + host + "/" + path,
			scheme + "://" + host + "/" + path + "?password=" + secret,
			scheme + "://" + host + "/" + path + "#" + secret,
			scheme + "://" + host + "?" + secret,
			"admin:" + secret + "@" + host + "/" + path,
		} {
			if _, err := Parse(address); err != nil && strings.Contains(err.Error(), marker) {
				t.Fatalf("Parse(%q): the error repeats the secret: %v", address, err)
			}
			if got := Redact(address); strings.Contains(got, marker) {
				t.Fatalf("Redact(%q) = %q shows the secret", address, got)
			}
		}
	})
}
