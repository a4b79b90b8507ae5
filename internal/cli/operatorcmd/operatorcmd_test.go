package operatorcmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	armada "github.com/airshipit/airship-go/internal/armada/armadaoperator"
	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/armadaoperatorcmd"
	"github.com/airshipit/airship-go/internal/cli/clitest"
	"github.com/airshipit/airship-go/internal/cli/metal3operatorcmd"
	"github.com/airshipit/airship-go/internal/cli/operatorcmd"
	"github.com/airshipit/airship-go/internal/cli/sipoperatorcmd"
	metal3 "github.com/airshipit/airship-go/internal/metal3/metal3operator"
	sip "github.com/airshipit/airship-go/internal/sip/sipoperator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// binary is one operator binary's command line with its operator replaced
// by ran, which is told what the operator would have been given.
type binary struct {
	name string
	cmd  func(streams cli.IOStreams, ran func(cfg *rest.Config, o any)) *cobra.Command
}

func fake[O any](spec operatorcmd.Spec[O]) binary {
	return binary{name: spec.Name, cmd: func(streams cli.IOStreams, ran func(*rest.Config, any)) *cobra.Command {
		spec.Run = func(_ context.Context, cfg *rest.Config, o O, _ logr.Logger) error {
			ran(cfg, o)
			return nil
		}
		return operatorcmd.New(streams, spec)
	}}
}

var (
	armadaBin = fake(armadaoperatorcmd.Spec)
	metal3Bin = fake(metal3operatorcmd.Spec)
	sipBin    = fake(sipoperatorcmd.Spec)
)

// checkOf makes a check of one operator's options fit the table.
func checkOf[O any](check func(t *testing.T, o O)) func(t *testing.T, o any) {
	return func(t *testing.T, o any) { check(t, o.(O)) }
}

// TestCommandLine runs each binary's command line with its operator
// replaced: exit codes, what is printed, whether the operator runs and the
// options it gets. Every binary finds the API server in its kubeconfig.
func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	// ops: a context namespace and client certificates; bm: a context
	// namespace and a token.
	ops, bm := filepath.Join(dir, "ops"), filepath.Join(dir, "bm")
	writeKubeconfig(t, ops, &rest.Config{Host: "https://127.0.0.1:1"}, "ops")
	writeKubeconfig(t, bm, &rest.Config{Host: "https://127.0.0.1:1", BearerToken: "t"}, "bm")
	tests := []struct {
		bin       binary
		name      string
		args      []string
		code      int
		stdoutHas string
		stderrHas string
		// version: stdout is the version as JSON, naming the binary.
		version bool
		// check sees the options the operator got; nil: it must not run.
		check func(t *testing.T, o any)
	}{
		{bin: armadaBin, name: "help", args: []string{"--help"}, code: 0, stdoutHas: "--chart-root"},
		{bin: armadaBin, name: "unknown flag", args: []string{"--bogus"}, code: 2, stderrHas: "Usage:"},
		{bin: armadaBin, name: "bad flag value", args: []string{"--concurrency=many"}, code: 2, stderrHas: `invalid argument "many"`},
		{bin: armadaBin, name: "bad chart mount", args: []string{"--chart-mount=charts"}, code: 2, stderrHas: "want LOCATION=DIR"},
		{bin: armadaBin, name: "stray argument", args: []string{"extra"}, code: 1, stderrHas: "unknown command"},
		{bin: armadaBin, name: "invalid option", args: []string{"--kubeconfig", ops, "--concurrency=0"}, code: 1, stderrHas: "--concurrency must be at least 1"},
		{bin: armadaBin, name: "help names the fetch bounds", args: []string{"--help"}, code: 0, stdoutHas: "--chart-fetch-timeout duration"},
		{bin: armadaBin, name: "zero fetch timeout", args: []string{"--kubeconfig", ops, "--chart-fetch-timeout=0s"}, code: 1, stderrHas: "--chart-fetch-timeout must be positive"},
		{bin: armadaBin, name: "no fetches", args: []string{"--kubeconfig", ops, "--chart-fetches=0"}, code: 1, stderrHas: "--chart-fetches must be at least 1"},
		{
			bin: armadaBin, name: "fetch bounds",
			args: []string{"--kubeconfig", ops, "--chart-fetch-timeout=15s", "--chart-fetches=3"},
			check: checkOf(func(t *testing.T, o armada.Options) {
				if o.ChartFetchTimeout != 15*time.Second || o.ChartFetches != 3 {
					t.Errorf("options %+v", o)
				}
			}),
		},
		{
			bin: armadaBin, name: "fetch bound defaults",
			args: []string{"--kubeconfig", ops},
			check: checkOf(func(t *testing.T, o armada.Options) {
				if o.ChartFetchTimeout != time.Minute || o.ChartFetches != 8 {
					t.Errorf("options %+v", o)
				}
			}),
		},
		{bin: armadaBin, name: "missing kubeconfig", args: []string{"--kubeconfig", "/nonexistent/kubeconfig"}, code: 1, stderrHas: "--kubeconfig /nonexistent/kubeconfig"},
		{
			bin: armadaBin, name: "out of cluster: Lease namespace from the kubeconfig context",
			args: []string{"--kubeconfig", ops, "--concurrency=3", "--chart-root=/srv/site", "--chart-mount=/opt/core=/srv/core", "--zap-log-level=debug"},
			check: checkOf(func(t *testing.T, o armada.Options) {
				if o.LeaderElectionNamespace != "ops" || !o.LeaderElection || o.Concurrency != 3 || o.ChartRoot != "/srv/site" ||
					len(o.ChartMounts) != 1 || o.ChartMounts[0].Location != "/opt/core" || o.ChartMounts[0].Dir != "/srv/core" {
					t.Errorf("options %+v", o)
				}
			}),
		},
		{
			bin: armadaBin, name: "explicit Lease namespace kept",
			args: []string{"--kubeconfig", ops, "--leader-election-namespace=kube-system"},
			check: checkOf(func(t *testing.T, o armada.Options) {
				if o.LeaderElectionNamespace != "kube-system" {
					t.Errorf("namespace %q", o.LeaderElectionNamespace)
				}
			}),
		},
		{
			bin: armadaBin, name: "leader election off needs no namespace",
			args: []string{"--kubeconfig", ops, "--leader-elect=false"},
			check: checkOf(func(t *testing.T, o armada.Options) {
				if o.LeaderElection || o.LeaderElectionNamespace != "" {
					t.Errorf("options %+v", o)
				}
			}),
		},
		{bin: armadaBin, name: "version", args: []string{"version", "-o", "json"}, version: true},

		{bin: metal3Bin, name: "help", args: []string{"--help"}, stdoutHas: "--power-poll-interval"},
		{bin: metal3Bin, name: "unknown flag", args: []string{"--bogus"}, code: 2, stderrHas: "Usage:"},
		{bin: metal3Bin, name: "bad flag value", args: []string{"--bmc-timeout=soon"}, code: 2, stderrHas: `invalid argument "soon"`},
		{bin: metal3Bin, name: "invalid option", args: []string{"--kubeconfig", bm, "--concurrency=0"}, code: 1, stderrHas: "--concurrency must be at least 1"},
		{bin: metal3Bin, name: "unknown controller", args: []string{"--kubeconfig", bm, "--controllers=baremetalhost,ironic"}, code: 1, stderrHas: `unknown controller "ironic"`},
		{
			bin: metal3Bin, name: "--controllers selects controllers",
			args: []string{"--kubeconfig", bm, "--controllers", "metal3machine, metal3cluster", "--machine-concurrency=7"},
			check: checkOf(func(t *testing.T, o metal3.Options) {
				if !slices.Equal(o.Controllers, []string{"metal3machine", "metal3cluster"}) || o.MachineConcurrency != 7 {
					t.Errorf("controllers %q machine concurrency %d", o.Controllers, o.MachineConcurrency)
				}
			}),
		},
		{
			bin: metal3Bin, name: "all controllers by default",
			args: []string{"--kubeconfig", bm},
			check: checkOf(func(t *testing.T, o metal3.Options) {
				if !slices.Equal(o.Controllers, metal3.Controllers) {
					t.Errorf("controllers %q, want %q", o.Controllers, metal3.Controllers)
				}
			}),
		},
		{bin: metal3Bin, name: "missing kubeconfig", args: []string{"--kubeconfig", "/nonexistent/kubeconfig"}, code: 1, stderrHas: "--kubeconfig /nonexistent/kubeconfig"},
		{
			bin: metal3Bin, name: "flags reach the operator; Lease namespace from the kubeconfig context",
			args: []string{"--kubeconfig", bm, "--concurrency=50", "--power-poll-interval=10s", "--bmc-timeout=3s", "--kube-api-qps=300"},
			check: checkOf(func(t *testing.T, o metal3.Options) {
				if o.Concurrency != 50 || o.PowerPollInterval != 10*time.Second || o.BMCTimeout != 3*time.Second || o.QPS != 300 || o.LeaderElectionNamespace != "bm" {
					t.Errorf("options %+v", o)
				}
			}),
		},
		{bin: metal3Bin, name: "version", args: []string{"version", "-o", "json"}, version: true},

		{bin: sipBin, name: "help", args: []string{"--help"}, stdoutHas: "--resync"},
		{bin: sipBin, name: "unknown flag", args: []string{"--bogus"}, code: 2, stderrHas: "Usage:"},
		{bin: sipBin, name: "bad flag value", args: []string{"--resync=soon"}, code: 2, stderrHas: `invalid argument "soon"`},
		{bin: sipBin, name: "invalid option", args: []string{"--kubeconfig", bm, "--resync=0s"}, code: 1, stderrHas: "--resync must be positive"},
		{bin: sipBin, name: "missing kubeconfig", args: []string{"--kubeconfig", "/nonexistent/kubeconfig"}, code: 1, stderrHas: "--kubeconfig /nonexistent/kubeconfig"},
		{
			bin: sipBin, name: "flags reach the operator; Lease namespace from the kubeconfig context",
			args: []string{"--kubeconfig", bm, "--resync=10s", "--kube-api-qps=300"},
			check: checkOf(func(t *testing.T, o sip.Options) {
				if o.Resync != 10*time.Second || o.QPS != 300 || o.LeaderElectionNamespace != "bm" {
					t.Errorf("options %+v", o)
				}
			}),
		},
		{bin: sipBin, name: "version", args: []string{"version", "-o", "json"}, version: true},
	}
	for _, tt := range tests {
		t.Run(tt.bin.name+"/"+tt.name, func(t *testing.T) {
			ran := false
			var out, errOut bytes.Buffer
			streams := cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
			cmd := tt.bin.cmd(streams, func(cfg *rest.Config, o any) {
				ran = true
				if cfg.Host != "https://127.0.0.1:1" {
					t.Errorf("host %q", cfg.Host)
				}
				if tt.check == nil {
					t.Errorf("operator ran with %+v", o)
					return
				}
				tt.check(t, o)
			})
			code := cli.Run(context.Background(), cmd, tt.args, streams)
			stdout, stderr := out.String(), errOut.String()
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdoutHas) || !strings.Contains(stderr, tt.stderrHas) {
				t.Errorf("stdout %q does not contain %q or stderr %q does not contain %q", stdout, tt.stdoutHas, stderr, tt.stderrHas)
			}
			if ran != (tt.check != nil) {
				t.Errorf("operator ran = %v, want %v", ran, tt.check != nil)
			}
			if tt.version {
				var v struct {
					Binary  string            `json:"binary"`
					Modules map[string]string `json:"modules"`
				}
				if err := json.Unmarshal([]byte(stdout), &v); err != nil {
					t.Fatalf("%v\n%s", err, stdout)
				}
				// Module versions are only in a built binary's information, which a test
				// binary lacks: test/e2e checks them on the built binaries.
				if v.Binary != tt.bin.name || v.Modules == nil {
					t.Errorf("version %+v", v)
				}
			}
		})
	}
}

func TestEveryCommandHasAWorkingExample(t *testing.T) {
	for _, bin := range []binary{armadaBin, metal3Bin, sipBin} {
		t.Run(bin.name, func(t *testing.T) {
			clitest.CheckExamples(t, bin.cmd(cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, nil))
		})
	}
}

// TestOutOfClusterWithOnlyKubeconfig runs the real armada-operator against
// a real API server with nothing but --kubeconfig and the listen
// addresses: it elects itself leader with a Lease in the kubeconfig
// context's namespace.
func TestOutOfClusterWithOnlyKubeconfig(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{CRDDirs: []string{"config/armada/crd/bases"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ops"}}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig(t, kubeconfig, env.Config, "ops")

	var errOut bytes.Buffer
	streams := cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errOut}
	done := make(chan int, 1)
	go func() {
		done <- operatorcmd.Main(ctx, []string{"--kubeconfig", kubeconfig, "--metrics-bind-address=0", "--health-probe-bind-address=0"}, streams, armadaoperatorcmd.Spec)
	}()
	var lease coordinationv1.Lease
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case code := <-done:
			t.Fatalf("operator exited %d: %s", code, errOut.String())
		default:
		}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: "ops", Name: armada.LeaderElectionID}, &lease)
		return err == nil && lease.Spec.HolderIdentity != nil, nil
	})
	if err != nil {
		t.Fatalf("no leader Lease in namespace ops: %v\n%s", err, errOut.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after cancel: %s", code, errOut.String())
	}
}

func TestLeaderElectionNamespaceDefault(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig(t, kubeconfig, &rest.Config{Host: "https://127.0.0.1:1"}, "")
	ns, err := operatorcmd.LeaderElectionNamespace(kubeconfig)
	if err != nil || ns != "default" {
		t.Fatalf("namespace %q, %v; want default as kubectl picks", ns, err)
	}
}

// writeKubeconfig writes a kubeconfig for cfg whose current context names
// namespace.
func writeKubeconfig(t *testing.T, path string, cfg *rest.Config, namespace string) {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: namespace}
	kc.CurrentContext = "ctx"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
}
