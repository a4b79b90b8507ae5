package genericcontainer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/document/fn"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// baseEnv are the variables of airshipctl's environment a local script
// gets besides PATH and what the spec gives it: a container starts from
// its image's environment, a script from these alone.
var baseEnv = []string{"HOME"}

// runResult is what a run reports for the state file.
type runResult struct {
	outputs int
}

// Run runs the image over the phase's documents and records the result
// for phase status.
func (e *Executor) Run(ctx context.Context, opts executor.RunOptions) error {
	send := func(typ, msg string) {
		if opts.Events != nil {
			opts.Events <- executor.Event{Type: typ, Message: msg}
		}
	}
	dir, err := os.MkdirTemp("", "airship-genericcontainer-")
	if err != nil {
		return fmt.Errorf("phase %q: %w", e.cfg.PhaseName, err)
	}
	defer func() {
		// The directory holds the cluster's kubeconfig and the script's
		// work: the phase's outcome stands, but the user is told when
		// they stay behind.
		if err := os.RemoveAll(dir); err != nil {
			send("Warning", err.Error())
		}
	}()

	kubeconfigPath := ""
	if e.cfg.ClusterName != "" {
		kubeconfigPath = filepath.Join(dir, "kubeconfig")
	}
	p, err := e.plan(kubeconfigPath)
	if err != nil {
		return err
	}
	if opts.DryRun {
		send("DryRun", fmt.Sprintf("would run %s (%s); nothing run", p.Image, p.Mode))
		return nil
	}
	start := e.now()
	res, err := e.run(ctx, p, dir, send)
	if serr := e.saveState(p, start, res, err); serr != nil {
		send("Warning", serr.Error())
	}
	if err != nil {
		return fmt.Errorf("phase %q: %s: %w", e.cfg.PhaseName, e.id, err)
	}
	return nil
}

func (e *Executor) run(ctx context.Context, p *Plan, dir string, send func(typ, msg string)) (runResult, error) {
	if p.Mode == ModeRuntime && p.Runtime == "" {
		looked := Runtimes
		if r := e.api.Spec.Airship.ContainerRuntime; r != "" {
			looked = []string{r}
		}
		return runResult{}, noRuntimeError(p.Image, looked)
	}
	config, err := e.config()
	if err != nil {
		return runResult{}, err
	}
	items, err := e.documents()
	if err != nil {
		return runResult{}, err
	}
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	if p.Kubeconfig {
		kc, err := e.cfg.ClusterKubeconfig(ctx, e.cfg.ClusterName)
		if err != nil {
			return runResult{}, fmt.Errorf("kubeconfig of cluster %q: %w", e.cfg.ClusterName, err)
		}
		// kubeconfig.Write writes 0600; dir (0700) goes when the run ends.
		if err := kubeconfig.Write(filepath.Join(dir, "kubeconfig"), kc); err != nil {
			return runResult{}, err
		}
	}
	send("Run", fmt.Sprintf("running %s (%s)", p.Image, p.Mode))
	switch p.Mode {
	case ModeBuiltin:
		return e.runBuiltin(p, config, items)
	case ModeScript:
		return e.runScript(ctx, p, config, items, dir, send)
	default:
		return e.runRuntime(ctx, p, config, items, send)
	}
}

// runBuiltin runs a built-in function in process. The config is told the
// image it came with, so an image's function (sops) is found by its image
// as in a build.
func (e *Executor) runBuiltin(p *Plan, config *yaml.RNode, items []*yaml.RNode) (runResult, error) {
	if config == nil {
		return runResult{}, fmt.Errorf("image %s runs the built-in %s function, which needs config or configRef", p.Image, p.Builtin)
	}
	config = config.Copy()
	spec := "container:\n  image: " + p.Image + "\n"
	if err := config.PipeE(yaml.SetAnnotation(runtimeutil.FunctionAnnotationKey, spec)); err != nil {
		return runResult{}, fmt.Errorf("config: %w", err)
	}
	out, err := fn.Run(config, items)
	if err != nil {
		return runResult{}, err
	}
	var buf bytes.Buffer
	if err := (kio.ByteWriter{Writer: &buf}).Write(out); err != nil {
		return runResult{}, err
	}
	n, err := writeOutput(buf.Bytes(), p.Sink, p.siteDir, e.stdout())
	return runResult{outputs: n}, err
}

// runScript runs a toolbox image's script as upstream's toolbox function
// does, with bash on this machine: the script in a fresh working
// directory, the documents (narrowed by the RESOURCE_*_FILTER variables)
// in $RENDERED_BUNDLE_PATH, the whole ResourceList on its standard input.
// Its standard error is the log; so is its standard output, unless the
// spec has a sinkOutputDir, which then receives the documents it prints.
func (e *Executor) runScript(ctx context.Context, p *Plan, config *yaml.RNode, items []*yaml.RNode, dir string, send func(typ, msg string)) (runResult, error) {
	script, err := e.script()
	if err != nil {
		return runResult{}, err
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return runResult{}, fmt.Errorf("image %s runs its script with bash, which is not on PATH: %w", p.Image, err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		return runResult{}, err
	}
	scriptPath := filepath.Join(work, "script.sh")
	if err := os.WriteFile(scriptPath, []byte(script), 0o700); err != nil {
		return runResult{}, err
	}
	// rw: false mounts are read-only copies: the script is no container.
	mounts, err := readOnlyMounts(p.Mounts, dir)
	defer func() { _ = makeWritable(filepath.Join(dir, "mounts")) }()
	if err != nil {
		return runResult{}, err
	}
	if err := makeReadOnly(filepath.Join(dir, "mounts")); err != nil {
		return runResult{}, err
	}
	sp := *p
	sp.Mounts = mounts
	env := scriptEnv(&sp, filepath.Join(dir, "kubeconfig"), filepath.Join(work, "bundle.yaml"), os.Getenv)
	if err := writeBundle(filepath.Join(work, "bundle.yaml"), items, env); err != nil {
		return runResult{}, err
	}
	stdin, err := resourceList(config, items)
	if err != nil {
		return runResult{}, err
	}
	cmd := exec.CommandContext(ctx, bash, "--noprofile", "--norc", scriptPath)
	cmd.Dir = work
	cmd.Env = env
	var out bytes.Buffer
	stdout := io.Writer(&out)
	logw := newLineWriter(func(line string) { send("Log", line) })
	defer func() { _ = logw.Close() }() // hands on the last line; never fails
	if p.Sink == "" {
		stdout = logw
	}
	if err := runCommand(ctx, cmd, stdin, stdout, logw, "script"); err != nil {
		return runResult{}, err
	}
	if p.Sink == "" {
		return runResult{}, nil
	}
	n, err := writeOutput(out.Bytes(), p.Sink, p.siteDir, nil)
	return runResult{outputs: n}, err
}

// runRuntime runs the image with the runtime found on PATH.
func (e *Executor) runRuntime(ctx context.Context, p *Plan, config *yaml.RNode, items []*yaml.RNode, send func(typ, msg string)) (runResult, error) {
	stdin, err := resourceList(config, items)
	if err != nil {
		return runResult{}, err
	}
	cmd := exec.CommandContext(ctx, p.Runtime, p.Args...)
	// The runtime reads NAME-only envVars from its own environment.
	cmd.Env = os.Environ()
	var out bytes.Buffer
	logw := newLineWriter(func(line string) { send("Log", line) })
	defer func() { _ = logw.Close() }() // hands on the last line; never fails
	if err := runCommand(ctx, cmd, stdin, &out, logw, p.Runtime); err != nil {
		return runResult{}, err
	}
	n, err := writeOutput(out.Bytes(), p.Sink, p.siteDir, e.stdout())
	return runResult{outputs: n}, err
}

// runCommand runs cmd in its own process group, so that a timeout stops
// what it started too.
func runCommand(ctx context.Context, cmd *exec.Cmd, stdin []byte, stdout, stderr io.Writer, what string) error {
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%s stopped: %w", what, ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("%s exited with status %d (its output is in the log above)", what, ee.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("running %s: %w", what, err)
	}
	return nil
}

// scriptEnv is a local script's environment, and nothing else of
// airshipctl's: PATH with this program's directory first (so airshipctl
// and the tools next to it are found), HOME, envVars (NAME-only ones from
// airshipctl's environment, when set there; makePlan has refused the
// names that steer the shell and the guarded ones), and what upstream's
// toolbox gets: KUBECONFIG,
// KCTL_CONTEXT, RENDERED_BUNDLE_PATH. A value naming a mount's container
// path, or a path under it, names the mount's host path instead: there is
// no container to mount it in.
func scriptEnv(p *Plan, kubeconfigPath, bundlePath string, getenv func(string) string) []string {
	path := getenv("PATH")
	if exe, err := os.Executable(); err == nil {
		path = filepath.Dir(exe) + string(os.PathListSeparator) + path
	}
	env := []string{"PATH=" + path}
	for _, name := range baseEnv {
		if v := getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	for _, v := range p.Env {
		value := v.Value
		if v.FromEnv {
			value = getenv(v.Name)
			if value == "" {
				continue
			}
		} else {
			value = mountedPath(value, p.Mounts)
		}
		env = append(env, v.Name+"="+value)
	}
	if p.Kubeconfig {
		env = append(env, EnvKubeconfig+"="+kubeconfigPath, EnvContext+"="+p.Context)
	}
	return append(env, EnvBundlePath+"="+bundlePath)
}

// mountedPath maps a container path under a mount to its host path.
func mountedPath(value string, mounts []v1.StorageMount) string {
	for _, m := range mounts {
		if m.DstPath == "" || m.Src == "" {
			continue
		}
		if value == m.DstPath {
			return m.Src
		}
		if strings.HasPrefix(value, strings.TrimSuffix(m.DstPath, "/")+"/") {
			return filepath.Join(m.Src, strings.TrimPrefix(value, strings.TrimSuffix(m.DstPath, "/")+"/"))
		}
	}
	return value
}

// writeBundle writes the documents the toolbox script finds in
// RENDERED_BUNDLE_PATH, narrowed as upstream's toolbox narrows them.
func writeBundle(path string, items []*yaml.RNode, env []string) error {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	docs := make([]*document.Document, 0, len(items))
	for _, it := range items {
		docs = append(docs, document.NewDocument(it, ""))
	}
	sel := document.NewSelector().ByGVK(vars[envGroupFilter], vars[envVersionFilter], vars[envKindFilter]).ByLabel(vars[envLabelFilter])
	b, err := document.NewBundle(path, docs).Filter(sel)
	if err != nil {
		return fmt.Errorf("%s: %w", envLabelFilter, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := b.Write(f); err != nil {
		_ = f.Close() // the write error is the one reported
		return err
	}
	return f.Close()
}

// lineWriter hands each complete line written to it to a function.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	line func(string)
}

func newLineWriter(line func(string)) *lineWriter { return &lineWriter{line: line} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(strings.TrimRight(string(w.buf[:i]), "\r"))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// Close hands on a last line without a newline.
func (w *lineWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.line(string(w.buf))
		w.buf = nil
	}
	return nil
}
