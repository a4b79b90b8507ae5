package baremetal

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/clitest"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	"github.com/airshipit/airship-go/internal/hostops"
	"github.com/airshipit/airship-go/internal/hostops/hostopstest"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

// env is the package's API server; each test works in its own namespaces.
var env *testenv.Env

func TestMain(m *testing.M) {
	flag.Parse()
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

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

// newRoot is airshipctl's root as far as baremetal needs it.
func newRoot(streams cli.IOStreams, f provisioner.BMCFactory) *cobra.Command {
	root := &cobra.Command{Use: "airshipctl"}
	g := &siteflags.Options{}
	g.AddFlags(root.PersistentFlags())
	root.AddCommand(NewCmd(streams, g, f))
	return root
}

func run(t *testing.T, f provisioner.BMCFactory, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code = cli.Run(context.Background(), newRoot(streams, f), args, streams)
	return out.String(), errOut.String(), code
}

type hostSpec struct {
	name, rack string
	online     bool
	state      metal3v1alpha1.ProvisioningState
}

// setup creates namespace ns with the hosts, their Secrets, a status as
// the controller would write it, and a fake BMC for each.
func setup(t *testing.T, ns string, specs ...hostSpec) *hostopstest.Factory {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	f := hostopstest.NewFactory()
	for _, s := range specs {
		h := hostopstest.BareMetalHost(ns, s.name, "redfish-virtualmedia+http://bmc.test:8000/redfish/v1/Systems/"+ns+"-"+s.name, map[string]string{"rack": s.rack})
		h.Spec.Online = s.online
		for _, o := range []client.Object{h, hostopstest.Secret(ns, hostopstest.CredentialsName(s.name), user, password)} {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		h.Status = metal3v1alpha1.BareMetalHostStatus{
			OperationalStatus: metal3v1alpha1.OperationalStatusOK,
			Provisioning:      metal3v1alpha1.ProvisionStatus{State: s.state},
			PoweredOn:         s.online,
		}
		if err := env.Client.Status().Update(ctx, h); err != nil {
			t.Fatal(err)
		}
		power := provisioner.PowerOff
		if s.online {
			power = provisioner.PowerOn
		}
		f.Add(bmcAddr(ns, s.name), &hostopstest.Host{Username: user, Password: password, Power: power})
	}
	return f
}

func bmcAddr(ns, name string) string {
	return "http://bmc.test:8000/redfish/v1/Systems/" + ns + "-" + name
}

var threeHosts = []hostSpec{
	{"node-1", "r1", true, metal3v1alpha1.StateProvisioned},
	{"node-2", "r2", false, metal3v1alpha1.StateAvailable},
	{"node-3", "r1", false, metal3v1alpha1.StateAvailable},
}

func TestListHosts(t *testing.T) {
	f := setup(t, "list-a", threeHosts...)
	setup(t, "list-b", hostSpec{"node-1", "r1", false, metal3v1alpha1.StateRegistering})
	kc := "--kubeconfig=" + env.Kubeconfig

	out, errOut, code := run(t, f, kc, "baremetal", "listhosts", "-l", "rack=r1", "-n", "list-a")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	checkGolden(t, "listhosts.txt", out)
	if len(f.Opens()) != 0 {
		t.Fatal("listhosts contacted a BMC")
	}

	out, errOut, code = run(t, f, kc, "baremetal", "listhosts", "--name", "node-1", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []hostRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []string
	for _, r := range rows {
		if strings.HasPrefix(r.Namespace, "list-") {
			got = append(got, r.Namespace+"/"+r.Name+"/"+r.State)
		}
	}
	if want := []string{"list-a/node-1/provisioned", "list-b/node-1/registering"}; !slices.Equal(got, want) {
		t.Fatalf("hosts %v, want %v", got, want)
	}

	out, _, code = run(t, f, kc, "baremetal", "listhosts", "-n", "list-b", "-o", "yaml")
	if code != 0 || !strings.Contains(out, "name: node-1\n") || !strings.Contains(out, "state: registering\n") {
		t.Fatalf("exit %d, yaml:\n%s", code, out)
	}

	_, errOut, code = run(t, f, kc, "baremetal", "listhosts", "-l", "rack=r9", "-n", "list-a")
	if code != 1 || !strings.Contains(errOut, `no BareMetalHost matches labels "rack=r9", in namespace "list-a"`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestPowerStatus(t *testing.T) {
	f := setup(t, "status", threeHosts...)
	f.Add(bmcAddr("status", "node-1"), &hostopstest.Host{Username: user, Password: password, Power: provisioner.PowerOn,
		Media: provisioner.MediaState{Inserted: true, Image: "http://images.test/ubuntu.iso"}})
	kc := "--kubeconfig=" + env.Kubeconfig

	out, errOut, code := run(t, f, kc, "baremetal", "powerstatus", "-n", "status")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	checkGolden(t, "powerstatus.txt", out)

	// A host whose BMC does not answer: its row says why, and the exit code is 1.
	f.Add(bmcAddr("status", "node-2"), &hostopstest.Host{Username: user, Password: password, Fail: map[string]error{"PowerState": provisioner.ErrUnreachable}})
	out, errOut, code = run(t, f, kc, "baremetal", "powerstatus", "-n", "status", "-o", "json")
	if code != 1 || !strings.Contains(errOut, "1 of 3 hosts failed") || !strings.Contains(errOut, "status/node-2: reading the power state: the BMC is unreachable") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var results []hostops.Result
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(results) != 3 || results[0].PowerState != provisioner.PowerOn || results[0].Media == nil || results[0].Media.Image != "http://images.test/ubuntu.iso" ||
		results[1].Error == "" || results[2].PowerState != provisioner.PowerOff {
		t.Fatalf("results %+v", results)
	}
}

func TestOperations(t *testing.T) {
	const iso = "http://images.test/ephemeral.iso"
	tests := []struct {
		args      []string
		wantPower provisioner.PowerState
		wantMedia provisioner.MediaState
		wantCalls []string
		wantForce []bool
	}{
		{args: []string{"poweron"}, wantPower: provisioner.PowerOn, wantCalls: []string{"PowerOn"}},
		{args: []string{"poweroff"}, wantPower: provisioner.PowerOff, wantCalls: []string{"PowerOff"}, wantForce: []bool{true}},
		{args: []string{"poweroff", "--graceful"}, wantPower: provisioner.PowerOff, wantCalls: []string{"PowerOff"}, wantForce: []bool{false}},
		{args: []string{"reboot"}, wantPower: provisioner.PowerOn, wantCalls: []string{"Reboot"}, wantForce: []bool{true}},
		{args: []string{"remotedirect", "--iso-url", iso}, wantPower: provisioner.PowerOn, wantMedia: provisioner.MediaState{Inserted: true, Image: iso}, wantCalls: []string{"Boot"}},
		{args: []string{"ejectmedia"}, wantPower: provisioner.PowerOn, wantCalls: []string{"EjectMedia"}},
	}
	for i, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			ns := fmt.Sprintf("op-%d", i)
			// node-1 and node-3 are in rack r1; node-1 is on with media inserted.
			f := setup(t, ns, threeHosts...)
			f.Add(bmcAddr(ns, "node-1"), &hostopstest.Host{Username: user, Password: password, Power: provisioner.PowerOn,
				Media: provisioner.MediaState{Inserted: true, Image: "http://images.test/old.iso"}})
			args := append([]string{"--kubeconfig=" + env.Kubeconfig, "baremetal"}, tt.args...)
			args = append(args, "-l", "rack=r1", "-n", ns, "-o", "json")
			out, errOut, code := run(t, f, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, errOut)
			}
			var results []hostops.Result
			if err := json.Unmarshal([]byte(out), &results); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if len(results) != 2 || results[0].Name != "node-1" || results[1].Name != "node-3" {
				t.Fatalf("results %+v", results)
			}
			for _, name := range []string{"node-1", "node-3"} {
				power, media, calls, _ := f.State(bmcAddr(ns, name))
				wantPower := tt.wantPower
				if tt.args[0] == "ejectmedia" && name == "node-3" {
					wantPower = provisioner.PowerOff // ejecting leaves the power alone
				}
				wantMedia := tt.wantMedia
				if name == "node-1" && tt.args[0] != "remotedirect" && tt.args[0] != "ejectmedia" {
					wantMedia = provisioner.MediaState{Inserted: true, Image: "http://images.test/old.iso"} // left alone
				}
				if power != wantPower || media != wantMedia || !slices.Equal(calls, tt.wantCalls) {
					t.Errorf("%s: power %s media %+v calls %v; want %s %+v %v", name, power, media, calls, wantPower, wantMedia, tt.wantCalls)
				}
				if got := f.Forced(bmcAddr(ns, name)); !slices.Equal(got, tt.wantForce) {
					t.Errorf("%s: force %v, want %v", name, got, tt.wantForce)
				}
				if !strings.Contains(errOut, "["+ns+"/"+name+"] done: ") {
					t.Errorf("no progress line for %s:\n%s", name, errOut)
				}
			}
			if _, _, calls, _ := f.State(bmcAddr(ns, "node-2")); len(calls) != 0 {
				t.Errorf("node-2 (rack r2) was called: %v", calls)
			}
		})
	}
}

func TestOperationTableAndFailures(t *testing.T) {
	f := setup(t, "fail", threeHosts...)
	f.Add(bmcAddr("fail", "node-3"), &hostopstest.Host{Username: user, Password: password,
		Fail: map[string]error{"PowerOff": fmt.Errorf("session for %s/%s: %w", user, password, provisioner.ErrRefused)}})
	// A host whose address carries credentials.
	bad := hostopstest.BareMetalHost("fail", "inline", "redfish+http://admin:"+password+"@bmc.test/redfish/v1/Systems/x", map[string]string{"rack": "r2"})
	if err := env.Client.Create(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	kc := "--kubeconfig=" + env.Kubeconfig
	out, errOut, code := run(t, f, kc, "baremetal", "poweroff", "--all", "-n", "fail")
	if code != 1 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	checkGolden(t, "poweroff-failures.txt", out)
	for _, want := range []string{"Error: 2 of 4 hosts failed", "fail/inline: spec.bmc.address: BMC address of scheme \"redfish+http\" carries credentials",
		"fail/node-3: power-off: session for admin/***: the BMC refused the request"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	list, _, _ := run(t, f, kc, "baremetal", "listhosts", "-n", "fail", "-l", "rack=r2", "-o", "json")
	for _, s := range []string{out, errOut, list} {
		if strings.Contains(s, password) {
			t.Fatalf("output holds the password:\n%s", s)
		}
	}
	if !strings.Contains(list, "redfish+http://admin:REDACTED@bmc.test/redfish/v1/Systems/x") {
		t.Fatalf("listhosts does not show the redacted address:\n%s", list)
	}
}

func TestUsageErrors(t *testing.T) {
	f := hostopstest.NewFactory()
	kc := "--kubeconfig=" + env.Kubeconfig
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"poweron"}, cli.ExitUsage, "poweron acts on the hosts --name or -l pick, or every host with --all"},
		{[]string{"reboot", "--all", "--name", "x"}, cli.ExitUsage, "--all and --name or -l exclude each other"},
		{[]string{"remotedirect", "--name", "x"}, 1, `required flag(s) "iso-url" not set`},
		{[]string{"remotedirect", "--name", "x", "--iso-url="}, cli.ExitUsage, "--iso-url: remote-direct needs the URL of an ISO"},
		{[]string{"poweron", "--name", "x", "--bogus"}, cli.ExitUsage, "unknown flag: --bogus"},
		{[]string{"poweron", "--name", "x", "-o", "xml"}, 1, `unknown output format "xml"`},
		{[]string{"listhosts", "stray"}, 1, `unknown command "stray"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, errOut, code := run(t, f, append([]string{kc, "baremetal"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errOut, tt.err) {
				t.Fatalf("exit %d, want %d; stderr:\n%s\nwant %q", code, tt.code, errOut, tt.err)
			}
		})
	}
	if len(f.Opens()) != 0 {
		t.Fatal("a BMC was opened")
	}
}

// TestReachingTheCluster picks the cluster with --context from a kubeconfig
// whose current context is down, and with --cluster from a site's ClusterMap.
func TestReachingTheCluster(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	f := setup(t, "reach", threeHosts[0])
	dir := t.TempDir()
	kc, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	real := kc.Contexts[kc.CurrentContext]
	kc.Clusters["down"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	kc.Contexts = map[string]*clientcmdapi.Context{"real": real, "down": {Cluster: "down", AuthInfo: real.AuthInfo}}
	kc.CurrentContext = "down"
	file := filepath.Join(dir, "two.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, file); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, f, "--kubeconfig="+file, "baremetal", "--context", "real", "poweron", "--name", "node-1", "-n", "reach")
	if code != 0 || !strings.Contains(out, "reach       node-1   On") {
		t.Fatalf("--context real: exit %d: %s%s", code, out, errOut)
	}
	if _, errOut, code := run(t, f, "--kubeconfig="+file, "baremetal", "listhosts", "-n", "reach", "--timeout", "5s"); code != 1 || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Fatalf("current context (down): exit %d: %s", code, errOut)
	}

	clusters, err := yaml.Marshal(map[string]any{
		"apiVersion": "airshipit.org/v1alpha1", "kind": "ClusterMap", "metadata": map[string]any{"name": "m"},
		"map": map[string]any{"target": map[string]any{"kubeconfigSources": []any{
			map[string]any{"type": "filesystem", "filesystem": map[string]any{"path": file, "contextName": "real"}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"airship-config.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: t\ncontexts: {t: {manifest: m}}\n" +
			"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n",
		"site/metadata.yaml":             "phase: {path: phases}\n",
		"site/phases/kustomization.yaml": "resources: [clusters.yaml]\n",
		"site/phases/clusters.yaml":      string(clusters),
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code = run(t, f, "--airshipconf="+filepath.Join(dir, "airship-config.yaml"), "--no-render-cache",
		"baremetal", "--cluster", "target", "poweroff", "--name", "node-1", "-n", "reach")
	if code != 0 || !strings.Contains(out, "reach       node-1   Off") {
		t.Fatalf("--cluster target: exit %d: %s%s", code, out, errOut)
	}
}

func TestEveryCommandHasAWorkingExample(t *testing.T) {
	clitest.CheckExamples(t, newRoot(cli.StdStreams(), nil))
}
