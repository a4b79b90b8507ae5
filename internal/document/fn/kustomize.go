package fn

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigyaml "sigs.k8s.io/yaml"
)

// The annotations and field kustomize reads a function spec from, newest
// first (kyaml runtimeutil.GetFunctionSpec).
const (
	legacyFunctionAnnotation  = "config.k8s.io/function"
	legacyContainerAnnotation = "config.kubernetes.io/container"
)

// Runner makes kustomize builds (krusty, in process) run every KRM function
// config through this package instead of a container runtime.
//
// kustomize v0.21 has no hook to run a function in process: the plugin
// loader and the function runner are internal, and a config with a function
// annotation is always run as a container or, when exec functions are
// enabled, as a program. So Runner presents the build with a file system
// that rewrites, as kustomize reads them, the function annotation of every
// config (whatever image or program it names) into an exec function
// pointing at the running binary with ServeEnv set; the binary answers with
// ServeIfRequested. Non-builtin configs without an annotation in files a
// kustomization lists under generators, transformers or validators (which
// kustomize would otherwise look up as legacy exec or Go plugins) are
// given the same annotation. ReplacementTransformer and Templater run; any
// other function fails with an *UnsupportedFunctionError naming its kind,
// name, file and image. Because every function annotation is rewritten,
// enabling exec functions runs no program but this one.
type Runner struct {
	// Executable is the program kustomize runs; it must call
	// ServeIfRequested first thing in main. Empty means os.Executable().
	Executable string

	// errorFile, when set, receives the function's error text instead of
	// stderr (Build reads it to return a full error).
	errorFile string
	// secretsFile, when set, is created by a function process that ran
	// the sops function (BuildSecrets reads it).
	secretsFile string
}

// Wrap returns the file system and krusty options a build uses. opts is
// not modified; nil means krusty.MakeDefaultOptions(). The returned
// options allow function plugins and exec functions (only this binary,
// see Runner) and keep everything else from opts.
//
// The kustomization tree must be on disk: kustomize runs exec functions in
// the kustomization's directory.
func (r *Runner) Wrap(fs filesys.FileSystem, opts *krusty.Options) (filesys.FileSystem, *krusty.Options, error) {
	exe := r.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, nil, fmt.Errorf("finding the running binary for KRM functions: %w", err)
		}
	}
	exe, err := filepath.Abs(exe)
	if err != nil {
		return nil, nil, fmt.Errorf("finding the running binary for KRM functions: %w", err)
	}
	if opts == nil {
		opts = krusty.MakeDefaultOptions()
	}
	o := *opts
	pc := types.MakePluginConfig(types.PluginRestrictionsNone, types.BploUseStaticallyLinked)
	if opts.PluginConfig != nil {
		pc.HelmConfig = opts.PluginConfig.HelmConfig
	}
	pc.FnpLoadingOptions = types.FnPluginLoadingOptions{EnableExec: true}
	o.PluginConfig = pc
	return &functionFS{FileSystem: fs, target: execTarget{exe: exe, errorFile: r.errorFile, secretsFile: r.secretsFile}}, &o, nil
}

// KustomizeOptions is Wrap with default options and the running binary.
func KustomizeOptions(fs filesys.FileSystem) (filesys.FileSystem, *krusty.Options, error) {
	return (&Runner{}).Wrap(fs, nil)
}

// FunctionError is a build that failed inside a KRM function: Msg is the
// function's own error, Err what kustomize returned.
type FunctionError struct {
	Msg string
	Err error
}

func (e *FunctionError) Error() string {
	return e.Msg + " [kustomize: " + strings.TrimSpace(e.Err.Error()) + "]"
}
func (e *FunctionError) Unwrap() error { return e.Err }

// Build runs krusty on path with r's function support. Unlike a build with
// Wrap, where a failing function's message goes to stderr and kustomize
// reports only its exit status, Build returns a *FunctionError carrying
// the function's message.
func (r *Runner) Build(fs filesys.FileSystem, path string, opts *krusty.Options) (resmap.ResMap, error) {
	m, _, err := r.BuildSecrets(fs, path, opts)
	return m, err
}

// BuildSecrets is Build that also tells whether the build ran a function
// that handles secrets: the sops function, whether it came from a file or
// from another function's output, and whatever it decrypted, encrypted or
// left alone. Its output may then hold clear secrets, and depends on the
// keys in the environment, so it must not be cached
// (document.SecretFunctionRunner).
func (r *Runner) BuildSecrets(fs filesys.FileSystem, path string, opts *krusty.Options) (resmap.ResMap, bool, error) {
	dir, err := os.MkdirTemp("", "airship-krm-fn-")
	if err != nil {
		return nil, false, fmt.Errorf("building %s: %w", path, err)
	}
	defer os.RemoveAll(dir)
	rr := *r
	rr.errorFile = filepath.Join(dir, "error")
	rr.secretsFile = filepath.Join(dir, "secrets")
	wfs, o, err := rr.Wrap(fs, opts)
	if err != nil {
		return nil, false, err
	}
	m, err := krusty.MakeKustomizer(o).Run(wfs, path)
	if err != nil {
		if msg, rerr := os.ReadFile(rr.errorFile); rerr == nil && len(msg) > 0 {
			return nil, false, &FunctionError{Msg: string(msg), Err: err}
		}
		if strings.Contains(err.Error(), "couldn't execute function: chdir") {
			return nil, false, fmt.Errorf("building %s: KRM functions run in their kustomization's directory, "+
				"which must exist on disk: %w", path, err)
		}
		return nil, false, err
	}
	_, statErr := os.Lstat(rr.secretsFile)
	return m, statErr == nil, nil
}

// functionFS rewrites function annotations as kustomize reads files.
type functionFS struct {
	filesys.FileSystem
	target execTarget

	mu sync.Mutex
	// configPaths are the files and directories kustomizations list under
	// generators, transformers and validators: what kustomize reads from
	// them are plugin configs.
	configPaths map[string]bool
}

var functionMarkers = [][]byte{
	[]byte(runtimeutil.FunctionAnnotationKey),
	[]byte(legacyFunctionAnnotation),
	[]byte(legacyContainerAnnotation),
	[]byte("configFn"),
}

// legacyPluginImage is what an error shows as the "image" of a plugin
// config without a function annotation, which kustomize would otherwise
// look for as an exec or Go plugin in its plugin home.
const legacyPluginImage = "(none: a kustomize exec/Go plugin config)"

// ReadFile returns the file with every function spec rewritten to run this
// binary, and, in files kustomizations list as plugin configs, every
// non-builtin config without a spec given one. Other files, and files that
// are not YAML, are returned as read.
func (f *functionFS) ReadFile(path string) ([]byte, error) {
	data, err := f.FileSystem.ReadFile(path)
	if err != nil {
		return data, err
	}
	if isKustomizationFile(path) {
		f.recordConfigPaths(path, data)
	}
	isConfig := f.isConfigPath(path)
	if !isConfig && !hasFunctionMarker(data) {
		return data, nil
	}
	out, changed, err := f.rewrite(path, data, isConfig)
	if err != nil || !changed {
		// Not YAML we can parse: kustomize will report it in its own words.
		return data, nil
	}
	return out, nil
}

func isKustomizationFile(path string) bool {
	base := filepath.Base(path)
	return slices.Contains(konfig.RecognizedKustomizationFileNames(), base)
}

// recordConfigPaths notes the local paths a kustomization lists as plugin
// configs. Inline configs and remote targets are not paths.
func (f *functionFS) recordConfigPaths(kustPath string, data []byte) {
	n, err := yaml.Parse(string(data))
	if err != nil || n.YNode().Kind != yaml.MappingNode {
		return
	}
	dir := filepath.Dir(kustPath)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.configPaths == nil {
		f.configPaths = map[string]bool{}
	}
	for _, field := range inlineConfigFields {
		seq := mapValue(n.YNode(), field)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		for _, el := range seq.Content {
			v := el.Value
			if el.Kind != yaml.ScalarNode || v == "" || strings.Contains(v, "\n") || strings.Contains(v, "://") {
				continue
			}
			if !filepath.IsAbs(v) {
				v = filepath.Join(dir, v)
			}
			f.configPaths[filepath.Clean(v)] = true
		}
	}
}

func (f *functionFS) isConfigPath(path string) bool {
	if isKustomizationFile(path) {
		return false
	}
	p := filepath.Clean(path)
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.configPaths {
		if p == c || strings.HasPrefix(p, c+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func hasFunctionMarker(data []byte) bool {
	for _, m := range functionMarkers {
		if bytes.Contains(data, m) {
			return true
		}
	}
	return false
}

// Kustomization fields whose entries may be inline plugin configs.
var inlineConfigFields = []string{"generators", "transformers", "validators"}

func (f *functionFS) rewrite(path string, data []byte, isConfig bool) ([]byte, bool, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true, DisableUnwrapping: true}).Read()
	if err != nil {
		return nil, false, err
	}
	changed := false
	for _, n := range nodes {
		inline, err := f.rewriteInline(path, n)
		if err != nil {
			return nil, false, err
		}
		changed = changed || inline
		if isConfig && pairLegacyAnnotationsInPatch(n) {
			changed = true
		}
		spec, err := runtimeutil.GetFunctionSpec(n)
		if err != nil {
			continue // kustomize reports a malformed spec itself
		}
		var image string
		switch {
		case spec != nil:
			image = spec.Container.Image
			if image == "" && spec.Exec.Path != "" {
				image = "exec:" + spec.Exec.Path
			}
		case isConfig && n.YNode().Kind == yaml.MappingNode && n.GetKind() != "" && n.GetApiVersion() != konfig.BuiltinPluginApiVersion:
			image = legacyPluginImage
		default:
			continue
		}
		if err := setExecSpec(n, f.target, image, path); err != nil {
			return nil, false, err
		}
		changed = true
	}
	if !changed {
		return nil, false, nil
	}
	var buf bytes.Buffer
	if err := (kio.ByteWriter{Writer: &buf}).Write(nodes); err != nil {
		return nil, false, err
	}
	return buf.Bytes(), true, nil
}

// execTarget is the program function configs are rewritten to run, and
// the files it reports through.
type execTarget struct {
	exe string
	// errorFile receives a failing function's message.
	errorFile string
	// secretsFile is created when the sops function runs.
	secretsFile string
}

// setExecSpec replaces n's function spec (in any of its spellings) with
// one that runs t.exe as the function, telling it the image and file the
// config came from.
func setExecSpec(n *yaml.RNode, t execTarget, image, file string) error {
	args := []string{argImage + image, argConfig + file}
	if t.errorFile != "" {
		args = append(args, argErrorFile+t.errorFile)
	}
	if t.secretsFile != "" {
		args = append(args, argSecretsFile+t.secretsFile)
	}
	ours := map[string]any{"exec": map[string]any{
		"path": t.exe,
		"args": args,
		"envs": []string{ServeEnv + "=1"},
	}}
	b, err := sigyaml.Marshal(ours)
	if err != nil {
		return err
	}
	if err := n.PipeE(yaml.ClearAnnotation(legacyFunctionAnnotation)); err != nil {
		return err
	}
	if err := n.PipeE(yaml.ClearAnnotation(legacyContainerAnnotation)); err != nil {
		return err
	}
	if err := n.PipeE(yaml.Lookup(yaml.MetadataField), yaml.Clear("configFn")); err != nil {
		return err
	}
	return n.PipeE(yaml.SetAnnotation(runtimeutil.FunctionAnnotationKey, string(b)))
}

// rewriteGenerated gives every function config among a function's output
// (a Templater that renders a sops ConfigMap, as upstream's
// decrypt-secrets does) the same exec spec Runner gives configs read from
// files: kustomize would otherwise try to run their images itself.
func rewriteGenerated(items []*yaml.RNode, t execTarget, from string) error {
	for _, n := range items {
		spec, err := runtimeutil.GetFunctionSpec(n)
		if err != nil || spec == nil {
			continue
		}
		image := spec.Container.Image
		if image == "" && spec.Exec.Path != "" {
			if spec.Exec.Path == t.exe {
				continue // already ours
			}
			image = "exec:" + spec.Exec.Path
		}
		file := "generated by " + from
		if p := docPath(n); p != "" {
			file = p + " (" + file + ")"
		}
		if err := setExecSpec(n, t, image, file); err != nil {
			return fmt.Errorf("%s/%s: rewriting its function annotation: %w", n.GetKind(), n.GetName(), err)
		}
	}
	return nil
}

// rewriteInline rewrites function configs written inline in a
// kustomization's generators, transformers or validators (an entry that is
// YAML text rather than a path).
func (f *functionFS) rewriteInline(path string, n *yaml.RNode) (bool, error) {
	if n.YNode().Kind != yaml.MappingNode {
		return false, nil
	}
	changed := false
	for _, field := range inlineConfigFields {
		seq := mapValue(n.YNode(), field)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		for _, el := range seq.Content {
			if el.Kind != yaml.ScalarNode || !strings.Contains(el.Value, "\n") || !hasFunctionMarker([]byte(el.Value)) {
				continue
			}
			out, ok, err := f.rewrite(path, []byte(el.Value), false)
			if err != nil || !ok {
				continue // not YAML: kustomize treats it as a path and reports it
			}
			el.Value, el.Style, el.Tag = string(out), yaml.LiteralStyle, "!!str"
			changed = true
		}
	}
	return changed, nil
}
