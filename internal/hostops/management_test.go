package hostops

import (
	"net/http"
	"testing"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
)

// TestRedfishOptions: the proxy decision and the certificate check that
// airshipctl's BMC client takes from managementConfiguration, with a proxy
// in the environment. The BMC name is never dialled: only the transport's
// choice is looked at (net/http never proxies loopback addresses).
func TestRedfishOptions(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:3128")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
	t.Setenv("NO_PROXY", "")
	tests := []struct {
		name         string
		mc           *v1.ManagementConfiguration
		wantProxy    string
		wantInsecure bool
	}{
		{"no managementConfiguration", nil, "", false},
		{"useproxy false", &v1.ManagementConfiguration{Type: "redfish"}, "", false},
		{"useproxy true", &v1.ManagementConfiguration{UseProxy: true}, "http://127.0.0.1:3128", false},
		{"insecure true", &v1.ManagementConfiguration{Insecure: true}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := RedfishOptions(tt.mc)
			got := ""
			if o.Proxy != nil {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://bmc.example.test/redfish/v1/", nil)
				u, err := o.Proxy(req)
				if err != nil {
					t.Fatal(err)
				}
				if u != nil {
					got = u.String()
				}
			}
			if got != tt.wantProxy || o.InsecureSkipVerify != tt.wantInsecure {
				t.Fatalf("proxy %q, insecure %v; want %q, %v", got, o.InsecureSkipVerify, tt.wantProxy, tt.wantInsecure)
			}
		})
	}
}
