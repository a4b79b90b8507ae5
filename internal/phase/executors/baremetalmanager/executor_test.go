package baremetalmanager

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/apply"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/hostops/hostopstest"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// env is the package's API server; each test works in its own namespace.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, func() (*testenv.Env, error) {
		return testenv.NewAPI(testenv.Options{
			CRDDirs:     []string{"config/metal3/crd/bases"},
			AddToScheme: []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme},
		})
	}, func(e *testenv.Env) { env = e }))
}

const (
	user     = "admin"
	password = "bmc-Pa55word"
)

// setup creates a namespace with hosts node-1..n (label rack=r<i%2>), their
// Secrets and fake BMCs, and returns the Factory and the namespace.
func setup(t *testing.T, n int) (*hostopstest.Factory, string) {
	t.Helper()
	ns := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	f := hostopstest.NewFactory()
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("node-%d", i)
		objs := []client.Object{
			hostopstest.BareMetalHost(ns, name, "redfish-virtualmedia+http://bmc.test:8000/redfish/v1/Systems/"+ns+"-"+name, map[string]string{"rack": fmt.Sprintf("r%d", i%2)}),
			hostopstest.Secret(ns, hostopstest.CredentialsName(name), user, password),
		}
		for _, o := range objs {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		f.Add(bmcAddr(ns, name), &hostopstest.Host{Username: user, Password: password})
	}
	return f, ns
}

func bmcAddr(ns, name string) string {
	return "http://bmc.test:8000/redfish/v1/Systems/" + ns + "-" + name
}

func newExecutor(t *testing.T, f provisioner.BMCFactory, spec string) *Executor {
	t.Helper()
	b, err := document.FromYAML("test", []byte("apiVersion: airshipit.org/v1alpha1\nkind: BaremetalManager\nmetadata: {name: power}\nspec:\n"+spec))
	if err != nil {
		t.Fatal(err)
	}
	cfg := executor.Config{
		PhaseName:   "power-hosts",
		ClusterName: "target-cluster",
		ExecutorDoc: b.Documents()[0],
		Kubeconfig: func(_ context.Context, req kubeconfig.Request) (*clientcmdapi.Config, error) {
			if req.Cluster != "target-cluster" {
				return nil, fmt.Errorf("asked for cluster %q", req.Cluster)
			}
			return clientcmd.LoadFromFile(env.Kubeconfig)
		},
	}
	e, err := NewWithFactory(cfg, f)
	if err != nil {
		t.Fatal(err)
	}
	e.pollInterval = 5 * time.Millisecond
	if err := e.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

func run(t *testing.T, e *Executor, opts executor.RunOptions) ([]executor.Event, error) {
	t.Helper()
	events := make(chan executor.Event, 1000)
	opts.Events = events
	err := e.Run(context.Background(), opts)
	close(events)
	var out []executor.Event
	for ev := range events {
		out = append(out, ev)
	}
	return out, err
}

func TestRun(t *testing.T) {
	const iso = "http://images.test/ephemeral.iso"
	tests := []struct {
		name      string
		spec      string
		wantPower provisioner.PowerState
		wantMedia provisioner.MediaState
		wantCalls []string
	}{
		{"power-on", "  operation: power-on\n", provisioner.PowerOn, provisioner.MediaState{}, []string{"PowerOn"}},
		{"power-off", "  operation: power-off\n", provisioner.PowerOff, provisioner.MediaState{}, []string{"PowerOff"}},
		{"reboot", "  operation: reboot\n", provisioner.PowerOn, provisioner.MediaState{}, []string{"Reboot"}},
		{"remote-direct", "  operation: remote-direct\n  operationOptions: {remoteDirect: {isoURL: " + iso + "}}\n", provisioner.PowerOn, provisioner.MediaState{Inserted: true, Image: iso}, []string{"Boot"}},
		{"eject-virtual-media", "  operation: eject-virtual-media\n", provisioner.PowerOff, provisioner.MediaState{}, []string{"EjectMedia"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ns := setup(t, 3)
			e := newExecutor(t, f, tt.spec+"  hostSelector: {namespace: "+ns+", labelSelector: rack=r1}\n")
			events, err := run(t, e, executor.RunOptions{})
			if err != nil {
				t.Fatalf("Run(): %v", err)
			}
			for _, name := range []string{"node-1", "node-3"} {
				power, media, calls, _ := f.State(bmcAddr(ns, name))
				if power != tt.wantPower || media != tt.wantMedia || !slices.Equal(calls, tt.wantCalls) {
					t.Errorf("%s: power %s media %+v calls %v; want %s %+v %v", name, power, media, calls, tt.wantPower, tt.wantMedia, tt.wantCalls)
				}
				if f := f.Forced(bmcAddr(ns, name)); slices.Contains(f, false) {
					t.Errorf("%s: a graceful request %v; the executor forces, as upstream", name, f)
				}
				obj := "BareMetalHost " + ns + "/" + name
				if !slices.ContainsFunc(events, func(ev executor.Event) bool {
					return ev.Object == obj && strings.HasPrefix(ev.Message, "done: power "+string(tt.wantPower))
				}) {
					t.Errorf("no done event for %s: %+v", obj, events)
				}
			}
			if _, _, calls, _ := f.State(bmcAddr(ns, "node-2")); len(calls) != 0 {
				t.Errorf("node-2 (rack r0) was called: %v", calls)
			}
			st, err := e.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Objects) != 2 {
				t.Fatalf("status objects %+v", st.Objects)
			}
			for _, o := range st.Objects {
				if !o.Applied || !o.Ready || !strings.HasPrefix(o.Message, "power "+string(tt.wantPower)) {
					t.Errorf("status %+v, want applied and ready at power %s", o, tt.wantPower)
				}
			}
		})
	}
}

func TestRunFailsNamingHosts(t *testing.T) {
	f, ns := setup(t, 3)
	f.Add(bmcAddr(ns, "node-2"), &hostopstest.Host{Username: user, Password: password, Fail: map[string]error{"PowerOn": provisioner.ErrRefused}})
	if err := env.Client.Delete(context.Background(), hostopstest.Secret(ns, hostopstest.CredentialsName("node-3"), "", "")); err != nil {
		t.Fatal(err)
	}
	e := newExecutor(t, f, "  operation: power-on\n  hostSelector: {namespace: "+ns+", labelSelector: rack}\n")
	_, err := run(t, e, executor.RunOptions{})
	if err == nil {
		t.Fatal("Run() succeeded with failing hosts")
	}
	for _, want := range []string{
		`phase "power-hosts": BaremetalManager power-on: 2 of 3 hosts failed`,
		ns + "/node-2: power-on: the BMC refused the request",
		ns + "/node-3: reading BMC credentials Secret " + ns + "/node-3-bmc-secret",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), ns+"/node-1") {
		t.Errorf("error names node-1, which succeeded: %v", err)
	}
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]bool{"node-1": {true, true}, "node-2": {true, false}, "node-3": {false, false}}
	for _, o := range st.Objects {
		name := o.ID[strings.LastIndex(o.ID, "/")+1:]
		if w := want[name]; o.Applied != w[0] || o.Ready != w[1] {
			t.Errorf("status %+v, want applied %v ready %v", o, w[0], w[1])
		}
	}
}

func TestRunNoHosts(t *testing.T) {
	f, ns := setup(t, 1)
	e := newExecutor(t, f, "  operation: reboot\n  hostSelector: {namespace: "+ns+", name: node-9}\n")
	_, err := run(t, e, executor.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), `no BareMetalHost matches name "node-9", in namespace "`+ns+`"`) {
		t.Fatalf("Run() error %v, want one naming the selector", err)
	}
	if _, err := e.Status(context.Background()); err == nil || !strings.Contains(err.Error(), "node-9") {
		t.Fatalf("Status() error %v, want one naming the selector", err)
	}
}

func TestDryRun(t *testing.T) {
	f, ns := setup(t, 2)
	e := newExecutor(t, f, "  operation: power-off\n  hostSelector: {namespace: "+ns+", labelSelector: rack}\n")
	events, err := run(t, e, executor.RunOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Opens()) != 0 {
		t.Fatalf("a dry run opened BMCs: %+v", f.Opens())
	}
	if len(events) != 2 || events[0].Type != "DryRun" || events[0].Object != "BareMetalHost "+ns+"/node-1" || !strings.HasPrefix(events[0].Message, "would power-off") {
		t.Fatalf("events %+v", events)
	}
}

func TestTimeout(t *testing.T) {
	f, ns := setup(t, 1)
	f.Add(bmcAddr(ns, "node-1"), &hostopstest.Host{Username: user, Password: password, Ignore: map[string]bool{"PowerOn": true}})
	e := newExecutor(t, f, "  operation: power-on\n  timeout: 1\n  hostSelector: {namespace: "+ns+", name: node-1}\n")
	if got := e.timeout(0); got != time.Second {
		t.Fatalf("timeout %v, want spec.timeout 1s", got)
	}
	if got := e.timeout(time.Minute); got != time.Minute {
		t.Fatalf("timeout %v, want the run's 1m", got)
	}
	_, err := run(t, e, executor.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), ns+"/node-1: power-on: power On not reached (power Off): context deadline exceeded") {
		t.Fatalf("Run() error %v", err)
	}
	e2 := newExecutor(t, f, "  operation: power-on\n  hostSelector: {name: node-1}\n")
	if got := e2.timeout(0); got != DefaultTimeout {
		t.Fatalf("timeout %v, want the default %v", got, DefaultTimeout)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		spec string
		err  string
	}{
		{"  operation: reboot\n  hostSelector: {name: a}\n", ""},
		{"  operation: remote-direct\n  operationOptions: {remoteDirect: {isoURL: http://i/x.iso}}\n  hostSelector: {labelSelector: a=b}\n", ""},
		{"  operation: remote-direct\n  hostSelector: {name: a}\n", "isoURL is required"},
		{"  operation: explode\n  hostSelector: {name: a}\n", `spec.operation "explode" is not one of`},
		{"  operation: power-on\n", "needs a name or a labelSelector"},
		{"  operation: power-on\n  hostSelector: {labelSelector: 'a in ('}\n", "spec.hostSelector.labelSelector"},
		{"  operation: power-on\n  timeout: -1\n  hostSelector: {name: a}\n", "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			b, err := document.FromYAML("test", []byte("apiVersion: airshipit.org/v1alpha1\nkind: BaremetalManager\nmetadata: {name: power}\nspec:\n"+tt.spec))
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(executor.Config{PhaseName: "p", ExecutorDoc: b.Documents()[0]})
			if err != nil {
				t.Fatal(err)
			}
			err = e.Validate(context.Background())
			if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.err)
			}
		})
	}
}

// After a pivot the hosts' namespace is marked moved, and during one
// (stopped half-way) being moved: either way the operation is the other
// cluster's business, so the phase does nothing, says why and succeeds;
// leftover hosts in that namespace are not touched. Status reports the
// namespace, ready once the move is finished.
func TestMovedNamespace(t *testing.T) {
	tests := []struct {
		name, annotations string
		said              []string
		ready             bool
	}{
		{"moved", `{"` + apply.MovedToAnnotation + `":"target-cluster"}`, []string{`was moved to cluster "target-cluster"`}, true},
		{"being moved", `{"` + apply.MovingToAnnotation + `":"target-cluster","` + apply.MovingPhaseAnnotation + `":"clusterctl-move"}`,
			[]string{`is being moved to cluster "target-cluster"`, `run phase "clusterctl-move" again`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ns := setup(t, 1)
			n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
			if err := env.Client.Patch(context.Background(), n, client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"annotations":`+tt.annotations+`}}`))); err != nil {
				t.Fatal(err)
			}
			e := newExecutor(t, f, "  operation: power-on\n  hostSelector: {namespace: "+ns+", labelSelector: rack}\n")
			events, err := run(t, e, executor.RunOptions{})
			if err != nil {
				t.Fatalf("Run(): %v", err)
			}
			if len(events) != 1 || events[0].Type != "Moved" {
				t.Fatalf("events %+v, want one saying where the namespace went", events)
			}
			for _, want := range tt.said {
				if !strings.Contains(events[0].Message, want) {
					t.Errorf("event %q does not say %q", events[0].Message, want)
				}
			}
			if len(f.Opens()) != 0 {
				t.Errorf("BMCs opened for a moved namespace: %+v", f.Opens())
			}
			st, err := e.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Objects) != 1 || st.Objects[0].Ready != tt.ready || st.Objects[0].ID != "Namespace "+ns || !strings.Contains(st.Objects[0].Message, "target-cluster") {
				t.Errorf("status %+v, want the namespace reported, ready=%v", st, tt.ready)
			}
		})
	}
}
