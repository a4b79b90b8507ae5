package metal3operator

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
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/clitest"
	"github.com/airshipit/airship-go/internal/metal3/operator"
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
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	kc.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: "bm"}
	kc.CurrentContext = "ctx"
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas string
		stderrHas string
		check     func(t *testing.T, o operator.Options)
	}{
		{name: "help", args: []string{"--help"}, stdoutHas: "--power-poll-interval"},
		{name: "unknown flag", args: []string{"--bogus"}, code: 2, stderrHas: "Usage:"},
		{name: "bad flag value", args: []string{"--bmc-timeout=soon"}, code: 2, stderrHas: `invalid argument "soon"`},
		{name: "invalid option", args: []string{"--kubeconfig", kubeconfig, "--concurrency=0"}, code: 1, stderrHas: "--concurrency must be at least 1"},
		{name: "unknown controller", args: []string{"--kubeconfig", kubeconfig, "--controllers=baremetalhost,ironic"}, code: 1, stderrHas: `unknown controller "ironic"`},
		{
			name: "--controllers selects controllers",
			args: []string{"--kubeconfig", kubeconfig, "--controllers", "metal3machine, metal3cluster", "--machine-concurrency=7"},
			check: func(t *testing.T, o operator.Options) {
				if !slices.Equal(o.Controllers, []string{"metal3machine", "metal3cluster"}) || o.MachineConcurrency != 7 {
					t.Errorf("controllers %q machine concurrency %d", o.Controllers, o.MachineConcurrency)
				}
			},
		},
		{
			name: "all controllers by default",
			args: []string{"--kubeconfig", kubeconfig},
			check: func(t *testing.T, o operator.Options) {
				if !slices.Equal(o.Controllers, operator.Controllers) {
					t.Errorf("controllers %q, want %q", o.Controllers, operator.Controllers)
				}
			},
		},
		{name: "missing kubeconfig", args: []string{"--kubeconfig", "/nonexistent/kubeconfig"}, code: 1, stderrHas: "--kubeconfig /nonexistent/kubeconfig"},
		{
			name: "flags reach the operator; Lease namespace from the kubeconfig context",
			args: []string{"--kubeconfig", kubeconfig, "--concurrency=50", "--power-poll-interval=10s", "--bmc-timeout=3s", "--kube-api-qps=300"},
			check: func(t *testing.T, o operator.Options) {
				if o.Concurrency != 50 || o.PowerPollInterval != 10*time.Second || o.BMCTimeout != 3*time.Second || o.QPS != 300 || o.LeaderElectionNamespace != "bm" {
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
			if ran != (tt.check != nil) {
				t.Errorf("operator ran = %v", ran)
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
		Binary string `json:"binary"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil || v.Binary != "metal3-operator" {
		t.Fatalf("version %+v %v\n%s", v, err, stdout)
	}
}

func TestEveryCommandHasAWorkingExample(t *testing.T) {
	clitest.CheckExamples(t, NewCmd(cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}))
}
