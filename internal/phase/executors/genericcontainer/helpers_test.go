package genericcontainer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// site is what a test executor is built from.
type site struct {
	// executor is the GenericContainer document.
	executor string
	// phaseDocs are the phase's documents (its documentEntryPoint); "" for none.
	phaseDocs string
	// phaseBundle holds documents a configRef names.
	phaseBundle string
	cluster     string
	// kubeconfig is a kubeconfig file for the cluster.
	kubeconfig string
	targetPath string
}

func newExecutor(t *testing.T, s site) *Executor {
	t.Helper()
	ex, err := build(t, s)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func build(t *testing.T, s site) (*Executor, error) {
	t.Helper()
	eb, err := document.FromYAML("executors.yaml", []byte(s.executor))
	if err != nil {
		t.Fatal(err)
	}
	target := s.targetPath
	if target == "" {
		target = t.TempDir()
	}
	cfg := executor.Config{
		PhaseName:   "test-phase",
		ClusterName: s.cluster,
		ExecutorDoc: eb.Documents()[0],
		TargetPath:  target,
		SiteDir:     filepath.Join(target, "site"),
	}
	pb := s.phaseBundle
	if pb == "" {
		pb = s.executor
	}
	if cfg.PhaseBundle, err = document.FromYAML("phases.yaml", []byte(pb)); err != nil {
		t.Fatal(err)
	}
	if s.phaseDocs != "" {
		b, err := document.FromYAML("phase/docs.yaml", []byte(s.phaseDocs))
		if err != nil {
			t.Fatal(err)
		}
		cfg.BundlePath = "phase"
		cfg.Bundle = func() (*document.Bundle, error) { return b, nil }
	}
	if s.kubeconfig != "" {
		r := &kubeconfig.Resolver{Override: s.kubeconfig}
		cfg.Kubeconfig = func(ctx context.Context, req kubeconfig.Request) (*clientcmdapi.Config, error) {
			return r.Get(ctx, req)
		}
	}
	ex, err := New(cfg)
	if err != nil {
		return nil, err
	}
	e := ex.(*Executor)
	e.now = func() time.Time { return time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC) }
	return e, nil
}

// stateDir gives the test its own state directory.
func stateDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	t.Setenv(StateDirEnv, d)
	return d
}

// events collects a run's events.
func runCollect(t *testing.T, e *Executor, opts executor.RunOptions) ([]executor.Event, error) {
	t.Helper()
	ch := make(chan executor.Event, 1024)
	opts.Events = ch
	err := e.Run(context.Background(), opts)
	close(ch)
	var out []executor.Event
	for ev := range ch {
		out = append(out, ev)
	}
	return out, err
}

func eventText(evs []executor.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(ev.Message)
		b.WriteString("\n")
	}
	return b.String()
}

// writeExecutable writes a script file with mode 0755.
func writeExecutable(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}
