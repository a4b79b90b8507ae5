package metal3operator

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/bmc"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/redfish"
	"github.com/airshipit/airship-go/internal/operatorkit/operatortest"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

func TestValidate(t *testing.T) {
	operatortest.Validate(t, DefaultOptions, []operatortest.Case[Options]{
		{Name: "no concurrency", Mutate: func(o *Options) { o.Concurrency = 0 }, Want: "--concurrency"},
		{Name: "no poll interval", Mutate: func(o *Options) { o.PowerPollInterval = 0 }, Want: "--power-poll-interval"},
		{Name: "no BMC timeout", Mutate: func(o *Options) { o.BMCTimeout = -time.Second }, Want: "--bmc-timeout"},
		{Name: "negative qps", Mutate: func(o *Options) { o.QPS = -1 }, Want: "--kube-api-qps"},
		{Name: "no machine concurrency", Mutate: func(o *Options) { o.MachineConcurrency = 0 }, Want: "--machine-concurrency"},
		{Name: "no controllers", Mutate: func(o *Options) { o.Controllers = nil }, Want: "names no controller"},
		{Name: "unknown controller", Mutate: func(o *Options) { o.Controllers = []string{"baremetalhost", "ironic"} }, Want: `unknown controller "ironic"`},
		{Name: "no provision poll interval", Mutate: func(o *Options) { o.ProvisionPollInterval = 0 }, Want: "--provision-poll-interval"},
		{Name: "ironic on loopback, noauth", Mutate: func(o *Options) { o.IronicEndpoint = "http://127.0.0.1:6385" }},
		{Name: "ironic on localhost, noauth, deploy ISO", Mutate: func(o *Options) {
			o.IronicEndpoint, o.DeployISO = "http://localhost:6385/v1", "http://127.0.0.1:8080/ipa.iso"
		}},
		{Name: "ironic elsewhere with credentials", Mutate: func(o *Options) {
			o.IronicEndpoint, o.IronicCredentialsFile, o.IronicCAFile = "https://ironic.metal3:6385", "/etc/ironic/auth.yaml", "/etc/ironic/ca.pem"
		}},
		{Name: "ironic elsewhere, noauth", Mutate: func(o *Options) { o.IronicEndpoint = "http://10.0.0.1:6385" }, Want: "noauth is only allowed on loopback"},
		{Name: "ironic endpoint not a URL", Mutate: func(o *Options) { o.IronicEndpoint = "127.0.0.1:6385" }, Want: "--ironic-endpoint must be an http(s) URL"},
		{Name: "ironic endpoint with a password", Mutate: func(o *Options) { o.IronicEndpoint = "http://admin:pw@127.0.0.1:6385" }, Want: "must not hold user information"},
		{Name: "credentials without an endpoint", Mutate: func(o *Options) { o.IronicCredentialsFile = "/etc/ironic/auth.yaml" }, Want: "--ironic-credentials-file needs --ironic-endpoint"},
		{Name: "deploy ISO without an endpoint", Mutate: func(o *Options) { o.DeployISO = "http://127.0.0.1/ipa.iso" }, Want: "--deploy-iso needs --ironic-endpoint"},
		{Name: "image download source", Mutate: func(o *Options) { o.IronicEndpoint, o.IronicImageDownloadSource = "http://127.0.0.1:6385", "http" }},
		{Name: "image download source unknown", Mutate: func(o *Options) { o.IronicEndpoint, o.IronicImageDownloadSource = "http://127.0.0.1:6385", "swift" }, Want: "--ironic-image-download-source must be http or local"},
		{Name: "image download source without an endpoint", Mutate: func(o *Options) { o.IronicImageDownloadSource = "local" }, Want: "--ironic-image-download-source needs --ironic-endpoint"},
		{Name: "deploy ISO not a URL", Mutate: func(o *Options) { o.IronicEndpoint, o.DeployISO = "http://127.0.0.1:6385", "ipa.iso" }, Want: "--deploy-iso must be an http(s) URL"},
		{Name: "deploy kernel without ramdisk", Mutate: func(o *Options) {
			o.IronicEndpoint, o.DeployKernel = "http://127.0.0.1:6385", "http://127.0.0.1/ipa.kernel"
		}, Want: "--deploy-kernel and --deploy-ramdisk go together"},
		{Name: "deploy ISO and kernel", Mutate: func(o *Options) {
			o.IronicEndpoint, o.DeployISO, o.DeployKernel, o.DeployRamdisk = "http://127.0.0.1:6385", "http://127.0.0.1/ipa.iso", "http://127.0.0.1/k", "http://127.0.0.1/r"
		}, Want: "--deploy-iso excludes"},
		{Name: "deploy ramdisk not a URL", Mutate: func(o *Options) {
			o.IronicEndpoint, o.DeployKernel, o.DeployRamdisk = "http://127.0.0.1:6385", "http://127.0.0.1/k", "initramfs"
		}, Want: "--deploy-ramdisk must be an http(s) URL"},
		{Name: "deploy kernel without an endpoint", Mutate: func(o *Options) { o.DeployKernel = "http://127.0.0.1/k" }, Want: "--deploy-kernel needs --ironic-endpoint"},
	})
}

// TestProvisionerFactory: the BareMetalHost controller's provisioner is
// the direct one without --ironic-endpoint, Ironic's with it; the
// credentials file must be private and hold both keys, and its errors
// never quote it.
func TestProvisionerFactory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("auth.yaml", "username: ironic\npassword: s3cret-IRONIC\n", 0o600)
	open := write("open.yaml", "username: ironic\npassword: s3cret-IRONIC\n", 0o644)
	partial := write("partial.yaml", "username: ironic\n", 0o600)
	tests := []struct {
		name      string
		endpoint  string
		creds, ca string
		want      string
		wantErr   string
	}{
		{name: "direct", want: "direct"},
		{name: "ironic, noauth on loopback", endpoint: "http://127.0.0.1:6385", want: "ironic"},
		{name: "ironic, http_basic", endpoint: "http://ironic.test:6385", creds: good, want: "ironic"},
		{name: "credentials file readable by others", endpoint: "http://ironic.test:6385", creds: open, wantErr: "mode 0644"},
		{name: "credentials file without a password", endpoint: "http://ironic.test:6385", creds: partial, wantErr: "username and password must both be set"},
		{name: "credentials file missing", endpoint: "http://ironic.test:6385", creds: filepath.Join(dir, "none.yaml"), wantErr: "--ironic-credentials-file"},
		{name: "CA file missing", endpoint: "https://127.0.0.1:6385", ca: filepath.Join(dir, "none.pem"), wantErr: "--ironic-endpoint: ironic: reading CA bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.IronicEndpoint, o.IronicCredentialsFile, o.IronicCAFile = tt.endpoint, tt.creds, tt.ca
			if err := o.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			f, err := o.provisionerFactory()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "s3cret-IRONIC") {
					t.Fatalf("err = %v, want it to hold %q and no password", err, tt.wantErr)
				}
				return
			}
			if err != nil || f == nil {
				t.Fatalf("factory %v, err %v", f, err)
			}
			if got := o.provisionerName(); got != tt.want {
				t.Errorf("provisioner %q, want %q", got, tt.want)
			}
			if pkg := reflect.TypeOf(f).Elem().PkgPath(); !strings.HasSuffix(pkg, "/provisioner/"+tt.want) {
				t.Errorf("factory of package %s, want %s", pkg, tt.want)
			}
		})
	}
}

// build renders a kustomization under config/metal3.
func build(t *testing.T, dir string) []*unstructured.Unstructured {
	return testenv.Kustomize(t, filepath.Join("config", "metal3", dir))
}

func TestDefaultKustomizationBuilds(t *testing.T) {
	testenv.ExpectKinds(t, "config/metal3/default", map[string]int{"CustomResourceDefinition": 13, "ClusterRole": 1, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "ServiceAccount": 1, "Namespace": 1, "Deployment": 2, "ConfigMap": 1, "Service": 2, "ValidatingAdmissionPolicy": 7, "ValidatingAdmissionPolicyBinding": 7})
	samples := map[string]int{}
	for _, u := range build(t, "samples") {
		samples[u.GetKind()]++
	}
	if want := map[string]int{"Namespace": 1, "Secret": 1, "BareMetalHost": 1}; !maps.Equal(samples, want) {
		t.Errorf("config/metal3/samples has %v, want %v", samples, want)
	}
}

// TestBMCConnectionsFollowConcurrency: hosts behind one BMC endpoint (the
// emulator's) are read in parallel up to --concurrency: the endpoint holds
// every request until all of them are in flight at once.
func TestBMCConnectionsFollowConcurrency(t *testing.T) {
	const n = 6
	o := DefaultOptions()
	o.Concurrency = n
	hosts := emulator.Generate(n, 1)
	emu, err := emulator.New(emulator.Config{Username: "admin", Password: "pw-conns", Hosts: hosts}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Close)
	var (
		mu             sync.Mutex
		inFlight, peak int
		once           sync.Once
	)
	all := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/redfish/v1/Systems/host-") {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			if inFlight == n {
				once.Do(func() { close(all) })
			}
			mu.Unlock()
			select {
			case <-all:
			case <-time.After(10 * time.Second):
			}
			mu.Lock()
			inFlight--
			mu.Unlock()
		}
		emu.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	f := redfish.New(redfishOptions(o))
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, h := range hosts {
		wg.Go(func() {
			access, err := bmc.Parse("redfish+http://" + strings.TrimPrefix(srv.URL, "http://") + "/redfish/v1/Systems/" + h.Name)
			if err == nil {
				var p provisioner.BMC
				if p, err = f.Open(t.Context(), provisioner.Target{Access: access, Credentials: provisioner.Credentials{Username: "admin", Password: "pw-conns"}}); err == nil {
					_, err = p.PowerState(t.Context())
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if peak != n {
		t.Errorf("at most %d requests to the endpoint at once, want %d (--concurrency)", peak, n)
	}
}

func freeAddr(t *testing.T) string { return testenv.FreeAddr(t) }

// operatorAccount is the operator's ServiceAccount with config/metal3/rbac.
var operatorAccount = testenv.ServiceAccount{Namespace: "metal3-system", Name: "metal3-operator", RBAC: "config/metal3/rbac"}

// startRBACSite is where the RBAC tests' hosts live: the metal3 namespace
// and an emulated BMC serving hosts, its admin's password password, until
// the test ends.
func startRBACSite(t *testing.T, env *testenv.Env, password string, hosts []emulator.Host) *emulator.Server {
	t.Helper()
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "metal3"}}); err != nil {
		t.Fatal(err)
	}
	emu, err := emulator.New(emulator.Config{Username: "admin", Password: password, Hosts: hosts}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emu.Start(t.Context(), "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	return emu
}

// runAsOperator runs the operator with o as operatorAccount until the
// test ends, leader election in the account's namespace (so the RBAC on
// Leases is exercised) and no metrics server.
func runAsOperator(t *testing.T, env *testenv.Env, o Options) {
	t.Helper()
	o.SkipControllerNameValidation = true
	o.MetricsAddr = "0"
	o.LeaderElectionNamespace = operatorAccount.Namespace
	testenv.RunAs(t, env, operatorAccount, func(ctx context.Context, cfg *rest.Config) error { return Run(ctx, cfg, o, logr.Discard()) })
}

// TestRBACIsEnough runs the operator as its ServiceAccount with only the
// roles under config/metal3/rbac, leader election on, and takes a host from
// created to available and then deleted against the emulator: any missing
// permission fails the test. Probes answer, the Lease is held, events are
// written.
func TestRBACIsEnough(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{CRDDirs: []string{"config/metal3/crd/bases"}, AddToScheme: []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme}})
	ctx := context.Background()
	emu := startRBACSite(t, env, "pw-rbac", emulator.Generate(1, 1))
	o := DefaultOptions()
	o.ProbeAddr = freeAddr(t)
	o.Controllers = []string{BareMetalHostController}
	runAsOperator(t, env, o)

	name := emulator.Generate(1, 1)[0].Name
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "bmc"}, Data: map[string][]byte{"username": []byte("admin"), "password": []byte("pw-rbac")}}
	host := &metal3v1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "node-1"},
		Spec:       metal3v1alpha1.BareMetalHostSpec{BMC: metal3v1alpha1.BMCDetails{Address: emu.Address(name), CredentialsName: "bmc"}},
	}
	for _, obj := range []client.Object{sec, host} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	var got metal3v1alpha1.BareMetalHost
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(host), &got); err != nil {
			return false, err
		}
		return got.Status.Provisioning.State == metal3v1alpha1.StateAvailable, nil
	}); err != nil {
		t.Fatalf("not available as the ServiceAccount: %v; status %+v", err, got.Status)
	}
	operatortest.ExpectLeaderAndProbes(t, env.Client, client.ObjectKey{Namespace: "metal3-system", Name: LeaderElectionID}, o.ProbeAddr)
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var evs eventsv1.EventList
		if err := env.Client.List(ctx, &evs, client.InNamespace("metal3")); err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == "node-1" && e.Reason == "Registered" {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Errorf("no Registered event written as the ServiceAccount: %v", err)
	}
	if err := env.Client.Delete(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(host), &got)
		return client.IgnoreNotFound(err) == nil && err != nil, nil
	}); err != nil {
		t.Fatalf("not deleted as the ServiceAccount: %v; status %+v", err, got.Status)
	}
}
