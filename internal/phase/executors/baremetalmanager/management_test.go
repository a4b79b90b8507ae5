package baremetalmanager

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/hostops/hostopstest"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// TestManagementConfiguration: an executor made by New (the phase's path)
// reaches BMCs as the config's managementConfiguration says: no proxy
// unless useproxy, certificates verified unless insecure.
func TestManagementConfiguration(t *testing.T) {
	tests := []struct {
		name     string
		mc       *v1.ManagementConfiguration
		tls      bool
		viaProxy bool
		wantErr  string
	}{
		{name: "none: direct", mc: nil},
		{name: "useproxy false: direct", mc: &v1.ManagementConfiguration{Type: "redfish"}},
		{name: "useproxy true: through the proxy", mc: &v1.ManagementConfiguration{UseProxy: true}, viaProxy: true},
		{name: "TLS verified", mc: &v1.ManagementConfiguration{}, tls: true, wantErr: "TLS certificate is not trusted"},
		{name: "TLS insecure", mc: &v1.ManagementConfiguration{Insecure: true}, tls: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := fmt.Sprintf("mgmt-%d", i)
			bmc := &hostopstest.Recorder{Next: hostopstest.EmulatedBMC(t, user, password)}
			bmcSrv := httptest.NewUnstartedServer(bmc)
			bmcSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
			scheme := "redfish+http://"
			if tt.tls {
				bmcSrv.StartTLS()
				scheme = "redfish+https://"
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

			host := strings.TrimPrefix(strings.TrimPrefix(bmcSrv.URL, "http://"), "https://")
			if tt.viaProxy {
				host = "bmc.example.test:8000" // answered by the proxy, never dialled
			}
			for _, o := range []client.Object{
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
				hostopstest.BareMetalHost(ns, "host-0000", scheme+host+"/redfish/v1/Systems/host-0000", nil),
				hostopstest.Secret(ns, hostopstest.CredentialsName("host-0000"), user, password),
			} {
				if err := env.Client.Create(context.Background(), o); err != nil {
					t.Fatal(err)
				}
			}
			b, err := document.FromYAML("test", []byte("apiVersion: airshipit.org/v1alpha1\nkind: BaremetalManager\nmetadata: {name: power}\nspec:\n  operation: power-on\n  hostSelector: {namespace: "+ns+", name: host-0000}\n"))
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(executor.Config{
				PhaseName: "power-hosts", ClusterName: "target-cluster", ExecutorDoc: b.Documents()[0], Management: tt.mc,
				Kubeconfig: func(context.Context, kubeconfig.Request) (*clientcmdapi.Config, error) {
					return clientcmd.LoadFromFile(env.Kubeconfig)
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			status, err := e.Status(context.Background())
			if err != nil || len(status.Objects) != 1 {
				t.Fatalf("Status(): %+v, %v", status, err)
			}
			o := status.Objects[0]
			if tt.wantErr != "" {
				if o.Applied || !strings.Contains(o.Message, tt.wantErr) {
					t.Fatalf("status %+v, want %q", o, tt.wantErr)
				}
			} else if !o.Applied {
				t.Fatalf("status %+v", o)
			}
			switch got := proxy.Hosts(); {
			case tt.viaProxy && (len(got) == 0 || got[0] != host):
				t.Fatalf("the proxy saw %v, want requests for %s", got, host)
			case !tt.viaProxy && len(got) != 0:
				t.Fatalf("the proxy got requests for %v", got)
			case !tt.viaProxy && tt.wantErr == "" && len(bmc.Hosts()) == 0:
				t.Fatal("the BMC got no request")
			}
		})
	}
}
