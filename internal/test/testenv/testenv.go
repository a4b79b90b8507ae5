package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// RequireEnv, when set to any value, turns a skip for missing binaries into a failure.
const RequireEnv = testtool.RequireEnv

// ErrNoBinaries is returned when the control-plane binaries are not built.
var ErrNoBinaries = local.ErrNoBinaries

// Env is a running control plane and clients for it.
type Env struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Client is a controller-runtime client using Scheme.
	Client client.Client
	// Scheme knows the built-in kinds plus whatever the options added.
	Scheme *runtime.Scheme
	// Kubeconfig is an admin kubeconfig file (mode 0600), for kubectl or airshipctl.
	Kubeconfig string
	// StateDir is the local control plane's state directory (full mode only),
	// for tests that stop or restart components.
	StateDir string

	stop   func() error
	before []func()
}

// BeforeStop has Stop call f (the last registered first) before it shuts
// the control plane down: for something a TestMain started beside it.
func (e *Env) BeforeStop(f func()) { e.before = append(e.before, f) }

// Stop shuts the control plane down.
func (e *Env) Stop() error {
	if e == nil {
		return nil
	}
	for i := len(e.before) - 1; i >= 0; i-- {
		e.before[i]()
	}
	e.before = nil
	if e.stop == nil {
		return nil
	}
	return e.stop()
}

// Options configure either mode.
type Options struct {
	// CRDDirs are directories of CRD manifests, relative to the repository
	// root unless absolute.
	CRDDirs []string
	// AddToScheme registers API types with the client's scheme.
	AddToScheme []func(*runtime.Scheme) error
	// Nodes is the number of kwok Nodes in full mode (default 3).
	Nodes int
}

// RepoRoot finds the repository root by walking up from the working
// directory to the go.mod of this module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/airshipit/airship-go\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.mod of github.com/airshipit/airship-go) not found above the working directory")
		}
		dir = parent
	}
}

func checkBinaries(names ...string) (string, error) {
	dir := local.DefaultBinDir()
	var missing []string
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return dir, fmt.Errorf("%w: %s missing from %s; %s", ErrNoBinaries, strings.Join(missing, ", "), dir, local.BuildHint)
	}
	return dir, nil
}

// skipOrFail skips the test for missing binaries, or fails it when RequireEnv is set.
func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNoBinaries) {
		testtool.Missing(t, "%v", err)
		return
	}
	t.Fatal(err)
}

// MainSkip is for TestMain: it reports whether the package's tests should be
// skipped because binaries are missing (printing why), or exits the process
// with status 1 when RequireEnv is set.
func MainSkip(err error) bool {
	if !errors.Is(err, ErrNoBinaries) {
		return false
	}
	if os.Getenv(RequireEnv) != "" {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "skipping: %v\n", err)
	return true
}

func newScheme(adds []func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	for _, add := range adds {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// NewAPI starts etcd + kube-apiserver with envtest and installs the CRDs.
// Call Stop when done. For TestMain; tests use StartAPI.
func NewAPI(opts Options) (*Env, error) {
	binDir, err := checkBinaries(local.Etcd, local.APIServer)
	if err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	scheme, err := newScheme(opts.AddToScheme)
	if err != nil {
		return nil, err
	}
	te := &envtest.Environment{
		BinaryAssetsDirectory: binDir,
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	for _, d := range opts.CRDDirs {
		te.CRDDirectoryPaths = append(te.CRDDirectoryPaths, fromRoot(root, d))
	}
	cfg, err := te.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	env := &Env{Config: cfg, Scheme: scheme, stop: te.Stop}
	fail := func(err error) (*Env, error) {
		_ = te.Stop()
		return nil, err
	}
	user, err := te.AddUser(envtest.User{Name: "airship-test-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fail(fmt.Errorf("adding admin user: %w", err))
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return fail(fmt.Errorf("admin kubeconfig: %w", err))
	}
	dir, err := os.MkdirTemp("", "airship-envtest-")
	if err != nil {
		return fail(err)
	}
	kcfg, err := clientcmd.Load(kc)
	if err != nil {
		return fail(fmt.Errorf("admin kubeconfig: %w", err))
	}
	env.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := kubeconfig.Write(env.Kubeconfig, kcfg); err != nil {
		return fail(err)
	}
	env.stop = func() error {
		err := te.Stop()
		return errors.Join(err, os.RemoveAll(dir))
	}
	if env.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		_ = env.stop()
		return nil, err
	}
	return env, nil
}

// StartAPI starts an API-only control plane for one test and stops it when
// the test ends.
func StartAPI(t testing.TB, opts Options) *Env {
	t.Helper()
	env, err := NewAPI(opts)
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	return env
}

// NewFull starts the full local control plane in a temporary state
// directory. Call Stop when done. For TestMain; tests use StartFull.
func NewFull(ctx context.Context, opts Options) (*Env, error) {
	if _, err := checkBinaries(local.Components...); err != nil {
		return nil, err
	}
	scheme, err := newScheme(opts.AddToScheme)
	if err != nil {
		return nil, err
	}
	stateDir, err := os.MkdirTemp("", "airship-full-")
	if err != nil {
		return nil, err
	}
	nodes := opts.Nodes
	if nodes == 0 {
		nodes = 3
	}
	stop := func() error {
		_, err := local.Down(local.DownOptions{StateDir: stateDir, Purge: true})
		return err
	}
	// Test packages run in parallel and each picks free ports; a port taken
	// between the pick and the bind makes a component fail, so try again
	// with fresh ports.
	var res *local.Result
	for attempt := 1; ; attempt++ {
		res, err = local.Up(ctx, local.Options{StateDir: stateDir, Nodes: nodes, Timeout: 3 * time.Minute})
		if err == nil {
			break
		}
		_ = stop()
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			return nil, fmt.Errorf("starting local control plane: %w", err)
		}
	}
	env := &Env{Scheme: scheme, Kubeconfig: res.State.Kubeconfig, StateDir: stateDir, stop: stop}
	fail := func(err error) (*Env, error) {
		_ = stop()
		return nil, err
	}
	if env.Config, err = clientcmd.BuildConfigFromFlags("", env.Kubeconfig); err != nil {
		return fail(err)
	}
	if env.Client, err = client.New(env.Config, client.Options{Scheme: scheme}); err != nil {
		return fail(err)
	}
	if len(opts.CRDDirs) > 0 {
		root, err := RepoRoot()
		if err != nil {
			return fail(err)
		}
		var paths []string
		for _, d := range opts.CRDDirs {
			paths = append(paths, fromRoot(root, d))
		}
		if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
			return fail(fmt.Errorf("installing CRDs: %w", err))
		}
	}
	return env, nil
}

// StartFull starts the full local control plane for one test and stops it,
// leaving no process or file behind, when the test ends.
func StartFull(t testing.TB, opts Options) *Env {
	t.Helper()
	env, err := NewFull(context.Background(), opts)
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping local control plane: %v", err)
		}
	})
	return env
}

// fromRoot resolves a CRD directory against the repository root.
func fromRoot(root, dir string) string {
	if filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(root, dir)
}

// Main is the body of a TestMain that shares one control plane across a
// package's tests: it starts it, hands it to use, runs the tests, stops it
// and returns the exit code. Missing binaries skip every test (code 0)
// unless RequireEnv is set; another start error fails them (code 1).
func Main(m *testing.M, start func() (*Env, error), use func(*Env)) int {
	e, err := start()
	if err != nil {
		if MainSkip(err) {
			return 0
		}
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	use(e)
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return code
}
