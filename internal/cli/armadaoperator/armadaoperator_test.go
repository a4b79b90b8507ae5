package armadaoperator

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/cli/operatorcmd"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/armada/operator"
	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/clitest"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

func run(t *testing.T, o *Options, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code = cli.Run(context.Background(), newCmd(streams, o), args, streams)
	return code, out.String(), errOut.String()
}

func TestCommandLine(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig(t, kubeconfig, &rest.Config{Host: "https://127.0.0.1:1"}, "ops")
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas string
		stderrHas string
		ran       bool
		check     func(t *testing.T, o operator.Options)
	}{
		{name: "help", args: []string{"--help"}, code: 0, stdoutHas: "--chart-root"},
		{name: "unknown flag", args: []string{"--bogus"}, code: 2, stderrHas: "Usage:"},
		{name: "bad flag value", args: []string{"--concurrency=many"}, code: 2, stderrHas: `invalid argument "many"`},
		{name: "bad chart mount", args: []string{"--chart-mount=charts"}, code: 2, stderrHas: "want LOCATION=DIR"},
		{name: "stray argument", args: []string{"extra"}, code: 1, stderrHas: "unknown command"},
		{name: "invalid option", args: []string{"--kubeconfig", kubeconfig, "--concurrency=0"}, code: 1, stderrHas: "--concurrency must be at least 1"},
		{name: "help names the fetch bounds", args: []string{"--help"}, code: 0, stdoutHas: "--chart-fetch-timeout duration"},
		{name: "zero fetch timeout", args: []string{"--kubeconfig", kubeconfig, "--chart-fetch-timeout=0s"}, code: 1, stderrHas: "--chart-fetch-timeout must be positive"},
		{name: "no fetches", args: []string{"--kubeconfig", kubeconfig, "--chart-fetches=0"}, code: 1, stderrHas: "--chart-fetches must be at least 1"},
		{
			name: "fetch bounds",
			args: []string{"--kubeconfig", kubeconfig, "--chart-fetch-timeout=15s", "--chart-fetches=3"},
			ran:  true,
			check: func(t *testing.T, o operator.Options) {
				if o.ChartFetchTimeout != 15*time.Second || o.ChartFetches != 3 {
					t.Errorf("options %+v", o)
				}
			},
		},
		{
			name: "fetch bound defaults",
			args: []string{"--kubeconfig", kubeconfig},
			ran:  true,
			check: func(t *testing.T, o operator.Options) {
				if o.ChartFetchTimeout != time.Minute || o.ChartFetches != 8 {
					t.Errorf("options %+v", o)
				}
			},
		},
		{name: "missing kubeconfig", args: []string{"--kubeconfig", "/nonexistent/kubeconfig"}, code: 1, stderrHas: "--kubeconfig /nonexistent/kubeconfig"},
		{
			name: "out of cluster: Lease namespace from the kubeconfig context",
			args: []string{"--kubeconfig", kubeconfig, "--concurrency=3", "--chart-root=/srv/site", "--chart-mount=/opt/core=/srv/core", "--zap-log-level=debug"},
			ran:  true,
			check: func(t *testing.T, o operator.Options) {
				if o.LeaderElectionNamespace != "ops" || !o.LeaderElection || o.Concurrency != 3 || o.ChartRoot != "/srv/site" ||
					len(o.ChartMounts) != 1 || o.ChartMounts[0].Location != "/opt/core" || o.ChartMounts[0].Dir != "/srv/core" {
					t.Errorf("options %+v", o)
				}
			},
		},
		{
			name: "explicit Lease namespace kept",
			args: []string{"--kubeconfig", kubeconfig, "--leader-election-namespace=kube-system"},
			ran:  true,
			check: func(t *testing.T, o operator.Options) {
				if o.LeaderElectionNamespace != "kube-system" {
					t.Errorf("namespace %q", o.LeaderElectionNamespace)
				}
			},
		},
		{
			name: "leader election off needs no namespace",
			args: []string{"--kubeconfig", kubeconfig, "--leader-elect=false"},
			ran:  true,
			check: func(t *testing.T, o operator.Options) {
				if o.LeaderElection || o.LeaderElectionNamespace != "" {
					t.Errorf("options %+v", o)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			o := &Options{Operator: operator.DefaultOptions(), run: func(_ context.Context, cfg *rest.Config, got operator.Options, _ logr.Logger) error {
				ran = true
				if cfg.Host != "https://127.0.0.1:1" {
					t.Errorf("host %q", cfg.Host)
				}
				tt.check(t, got)
				return nil
			}}
			code, stdout, stderr := run(t, o, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdoutHas) || !strings.Contains(stderr, tt.stderrHas) {
				t.Errorf("stdout %q does not contain %q or stderr %q does not contain %q", stdout, tt.stdoutHas, stderr, tt.stderrHas)
			}
			if ran != tt.ran {
				t.Errorf("operator ran = %v, want %v", ran, tt.ran)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	code, stdout, stderr := run(t, &Options{Operator: operator.DefaultOptions()}, "version", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v struct {
		Binary  string            `json:"binary"`
		Modules map[string]string `json:"modules"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	// Module versions are only in a built binary's information, which a test
	// binary lacks: test/e2e checks them on the built binaries.
	if v.Binary != "armada-operator" || v.Modules == nil {
		t.Errorf("version %+v", v)
	}
}

// TestOutOfClusterWithOnlyKubeconfig runs the real operator against a real
// API server with nothing but --kubeconfig and the listen addresses: it
// elects itself leader with a Lease in the kubeconfig context's namespace.
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
		done <- Main(ctx, []string{"--kubeconfig", kubeconfig, "--metrics-bind-address=0", "--health-probe-bind-address=0"}, streams)
	}()
	var lease coordinationv1.Lease
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case code := <-done:
			t.Fatalf("operator exited %d: %s", code, errOut.String())
		default:
		}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: "ops", Name: operator.LeaderElectionID}, &lease)
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

func writeKubeconfig(t *testing.T, path string, cfg *rest.Config, namespace string) {
	t.Helper()
	kc := clientcmdapiConfig(cfg, namespace)
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
}

func TestEveryCommandHasAWorkingExample(t *testing.T) {
	clitest.CheckExamples(t, NewCmd(cli.StdStreams()))
}
