package baremetal

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/hostops"
	"github.com/airshipit/airship-go/internal/hostops/hostopstest"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/redfish"
)

// adopt creates namespace ns with host-0000 reached at address.
func adopt(t *testing.T, ns, address string) {
	t.Helper()
	ctx := context.Background()
	h := hostopstest.BareMetalHost(ns, "host-0000", address, nil)
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, h, hostopstest.Secret(ns, hostopstest.CredentialsName("host-0000"), user, password)} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// airshipConfig writes an airship config whose current context has the
// managementConfiguration given (none when mc is empty).
func airshipConfig(t *testing.T, mc string) string {
	t.Helper()
	cfg := "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: c\ncontexts:\n  c: {}\n"
	if mc != "" {
		cfg = "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: c\ncontexts:\n  c: {managementConfiguration: m}\nmanagementConfiguration:\n  m: " + mc + "\n"
	}
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPowerStatusManagementConfiguration: `baremetal powerstatus` honours
// the airship config's managementConfiguration: no proxy unless useproxy
// (the Basic-auth header never goes to a proxy otherwise), certificates
// verified unless insecure. The proxy is a loopback server that answers as
// the BMC; with useproxy the BMC's name is one that is never dialled.
func TestPowerStatusManagementConfiguration(t *testing.T) {
	tests := []struct {
		name     string
		mc       string // the managementConfiguration; "none": no airship config at all
		tls      bool
		viaProxy bool // the host's address is a name only the proxy answers for
		wantCode int
		wantErr  string
	}{
		{name: "no airship config: direct", mc: "none"},
		{name: "context without managementConfiguration: direct", mc: ""},
		{name: "useproxy false: direct", mc: "{type: redfish, useproxy: false}"},
		{name: "useproxy true: through the proxy", mc: "{type: redfish, useproxy: true}", viaProxy: true},
		{name: "TLS verified by default", mc: "{type: redfish}", tls: true, wantCode: 1, wantErr: "TLS certificate is not trusted"},
		{name: "TLS with insecure true", mc: "{type: redfish, insecure: true}", tls: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := fmt.Sprintf("mgmt-%d", i)
			bmc := &hostopstest.Recorder{Next: hostopstest.EmulatedBMC(t, user, password)}
			bmcSrv := httptest.NewUnstartedServer(bmc)
			bmcSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
			if tt.tls {
				bmcSrv.StartTLS()
			} else {
				bmcSrv.Start()
			}
			t.Cleanup(bmcSrv.Close)
			proxy := &hostopstest.Recorder{Next: hostopstest.EmulatedBMC(t, user, password)}
			proxySrv := httptest.NewServer(proxy)
			t.Cleanup(proxySrv.Close)
			t.Setenv("HTTP_PROXY", proxySrv.URL)
			t.Setenv("HTTPS_PROXY", proxySrv.URL)
			t.Setenv("NO_PROXY", "")

			scheme := "redfish+http://"
			if tt.tls {
				scheme = "redfish+https://"
			}
			host := strings.TrimPrefix(strings.TrimPrefix(bmcSrv.URL, "http://"), "https://")
			if tt.viaProxy {
				host = "bmc.example.test:8000"
			}
			adopt(t, ns, scheme+host+"/redfish/v1/Systems/host-0000")
			conf := filepath.Join(t.TempDir(), "absent")
			if tt.mc != "none" {
				conf = airshipConfig(t, tt.mc)
			}
			out, errOut, code := run(t, nil, "--airshipconf="+conf, "--kubeconfig="+env.Kubeconfig, "baremetal", "powerstatus", "-n", ns, "-o", "json")
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d: %s%s", code, tt.wantCode, out, errOut)
			}
			var results []hostops.Result
			if err := json.Unmarshal([]byte(out), &results); err != nil || len(results) != 1 {
				t.Fatalf("%v: %s", err, out)
			}
			if tt.wantErr != "" {
				if !strings.Contains(results[0].Error, tt.wantErr) {
					t.Fatalf("error %q, want %q", results[0].Error, tt.wantErr)
				}
			} else if results[0].Error != "" || results[0].PowerState == "" {
				t.Fatalf("result %+v", results[0])
			}
			if tt.viaProxy {
				if got := proxy.Hosts(); len(got) == 0 || got[0] != host {
					t.Fatalf("the proxy saw %v, want requests for %s", got, host)
				}
				return
			}
			if got := proxy.Hosts(); len(got) != 0 {
				t.Fatalf("the proxy got requests for %v", got)
			}
			if tt.wantErr == "" && len(bmc.Hosts()) == 0 {
				t.Fatal("the BMC got no request")
			}
		})
	}
}

// TestPowerStatusHostileBMC: `baremetal powerstatus` against a BMC that
// answers the system with an endless body, or not at all: exit 1, the row
// says why (the path and the limit; a timeout), nothing else is held up.
func TestPowerStatusHostileBMC(t *testing.T) {
	const system = "/redfish/v1/Systems/host-0000"
	tests := []struct {
		name    string
		args    []string
		hang    bool
		wantErr []string
	}{
		{name: "endless answer", wantErr: []string{fmt.Sprintf("the answer to GET %s is larger than the limit of %d bytes", system, redfish.DefaultMaxResponseBytes)}},
		{name: "no answer", args: []string{"--timeout", "1s"}, hang: true, wantErr: []string{"timed out"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := fmt.Sprintf("hostile-%d", i)
			emu := hostopstest.EmulatedBMC(t, user, password)
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != system {
					emu.ServeHTTP(w, r)
					return
				}
				if tt.hang {
					select {
					case <-release:
					case <-r.Context().Done():
					}
					return
				}
				_, _ = w.Write([]byte(`{"Id": "`))
				chunk := []byte(strings.Repeat("x", 64<<10))
				for range 400 << 20 / len(chunk) {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			}))
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(release) })
			adopt(t, ns, "redfish+http://"+strings.TrimPrefix(srv.URL, "http://")+system)
			args := append([]string{"--airshipconf=" + filepath.Join(t.TempDir(), "absent"), "--kubeconfig=" + env.Kubeconfig, "baremetal", "powerstatus", "-n", ns, "-o", "json"}, tt.args...)
			out, errOut, code := run(t, nil, args...)
			if code != 1 {
				t.Fatalf("exit %d: %s%s", code, out, errOut)
			}
			var results []hostops.Result
			if err := json.Unmarshal([]byte(out), &results); err != nil || len(results) != 1 {
				t.Fatalf("%v: %s", err, out)
			}
			for _, want := range append(tt.wantErr, "BMC "+srv.URL) {
				if !strings.Contains(results[0].Error, want) {
					t.Errorf("error %q does not say %q", results[0].Error, want)
				}
			}
			if strings.Contains(out+errOut, password) || strings.Contains(out+errOut, "xxxx") {
				t.Fatalf("output quotes the password or the body:\n%s%s", out, errOut)
			}
		})
	}
}
