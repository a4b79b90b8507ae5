package fn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// UnsupportedFunctionError is returned for a function config this package
// does not implement. There is no container runtime to fall back on.
type UnsupportedFunctionError struct {
	APIVersion, Kind, Name string
	// File is the file the config came from, when known.
	File string
	// Image is the container image (or "exec:" and the path) the config's
	// function annotation named.
	Image string
}

func (e *UnsupportedFunctionError) Error() string {
	image := e.Image
	if image == "" {
		image = "(none)"
	}
	where := ""
	if e.File != "" {
		where = ", file " + e.File
	}
	return fmt.Sprintf("KRM function %s/%s (apiVersion %q, image %s%s) is not supported: "+
		"airshipctl runs only %s %s and %s, and the %s image's function, in process and has no container runtime",
		e.Kind, e.Name, e.APIVersion, image, where, APIVersion, KindReplacementTransformer, KindTemplater, SopsImage)
}

// runOptions carry what the exec entry point knows beyond the ResourceList.
type runOptions struct {
	entropy Entropy
	// image is the function image the config named before Runner rewrote
	// its annotation; empty means read it from the annotation.
	image string
	// file is the config's file, for errors.
	file string
	// target, when its exe is set, is what function configs among the
	// output are rewritten to run (see rewriteGenerated); its secretsFile
	// is created before the sops function runs.
	target execTarget
}

// Run runs the function config on items and returns the resulting items,
// dispatching on the config's apiVersion and kind. A kind this package does
// not implement is an *UnsupportedFunctionError naming the image.
func Run(config *yaml.RNode, items []*yaml.RNode) ([]*yaml.RNode, error) {
	return run(config, items, runOptions{})
}

func run(config *yaml.RNode, items []*yaml.RNode, o runOptions) ([]*yaml.RNode, error) {
	if config == nil || config.IsNilOrEmpty() {
		return nil, errors.New("the ResourceList has no functionConfig")
	}
	id := config.GetKind() + "/" + config.GetName()
	if o.file != "" {
		id += " (file " + o.file + ")"
	} else if p := docPath(config); p != "" {
		id += " (file " + p + ")"
	}
	image := o.image
	if image == "" {
		image = functionImage(config)
	}
	var f kio.Filter
	var err error
	if config.GetApiVersion() == APIVersion {
		switch config.GetKind() {
		case KindReplacementTransformer:
			f, err = NewReplacementTransformer(config)
		case KindTemplater:
			f, err = NewTemplater(config, o.entropy)
		}
	}
	if builtin, _ := BuiltinImage(image); f == nil && err == nil && builtin == BuiltinSops {
		// Tell the build first: whatever happens next, its output may
		// hold clear secrets or depend on the keys in the environment.
		if o.target.secretsFile != "" {
			if werr := os.WriteFile(o.target.secretsFile, nil, 0o600); werr != nil {
				return nil, fmt.Errorf("%s: recording that the build handles secrets: %w", id, werr)
			}
		}
		f, err = NewSops(config)
	}
	if err != nil {
		return nil, redactError(err)
	}
	if f == nil {
		file := o.file
		if file == "" {
			file = docPath(config)
		}
		return nil, &UnsupportedFunctionError{APIVersion: config.GetApiVersion(), Kind: config.GetKind(), Name: config.GetName(), File: file, Image: image}
	}
	out, err := f.Filter(items)
	if err != nil {
		return nil, redactError(fmt.Errorf("%s: %w", id, err))
	}
	if o.target.exe != "" {
		if err := rewriteGenerated(out, o.target, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// functionImage is the image (or exec path) a config's function annotation
// names, or "".
func functionImage(config *yaml.RNode) string {
	spec, err := runtimeutil.GetFunctionSpec(config)
	if err != nil || spec == nil {
		return ""
	}
	if spec.Container.Image != "" {
		return spec.Container.Image
	}
	if spec.Exec.Path != "" {
		return "exec:" + spec.Exec.Path
	}
	return ""
}

// Accepted ResourceList apiVersions: v1 is what kustomize writes, v1alpha1
// what older functions wrote.
var resourceListAPIVersions = []string{kio.ResourceListAPIVersion, "config.kubernetes.io/v1alpha1"}

// DecodeResourceList reads one ResourceList document: its functionConfig
// (nil when absent) and items (each an object).
func DecodeResourceList(data []byte) (config *yaml.RNode, items []*yaml.RNode, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, errors.New("reading ResourceList: empty input")
		}
		return nil, nil, fmt.Errorf("reading ResourceList: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, nil, errors.New("reading ResourceList: more than one YAML document")
	} else if !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("reading ResourceList: %w", err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("reading ResourceList: the document is %s, not an object", kindName(root))
	}
	rl := yaml.NewRNode(root)
	if k := rl.GetKind(); k != kio.ResourceListKind {
		return nil, nil, fmt.Errorf("reading ResourceList: kind is %q, want %s", k, kio.ResourceListKind)
	}
	av := rl.GetApiVersion()
	if !slices.Contains(resourceListAPIVersions, av) {
		return nil, nil, fmt.Errorf("reading ResourceList: apiVersion is %q, want one of %s", av, strings.Join(resourceListAPIVersions, ", "))
	}
	if fc := mapValue(root, "functionConfig"); fc != nil && !isNull(fc) {
		if fc.Kind != yaml.MappingNode {
			return nil, nil, fmt.Errorf("reading ResourceList: functionConfig is %s, not an object", kindName(fc))
		}
		config = yaml.NewRNode(fc)
	}
	if it := mapValue(root, "items"); it != nil && !isNull(it) {
		if it.Kind != yaml.SequenceNode {
			return nil, nil, fmt.Errorf("reading ResourceList: items is %s, not a list", kindName(it))
		}
		for i, n := range it.Content {
			if n.Kind != yaml.MappingNode {
				return nil, nil, fmt.Errorf("reading ResourceList: items[%d] is %s, not an object", i, kindName(n))
			}
			items = append(items, yaml.NewRNode(n))
		}
	}
	return config, items, nil
}

// Serve reads a ResourceList from r, runs its functionConfig on its items
// and writes the resulting ResourceList to w: the KRM function protocol, so
// the binary can serve as an exec function.
func Serve(r io.Reader, w io.Writer) error {
	return serve(r, w, runOptions{})
}

func serve(r io.Reader, w io.Writer, o runOptions) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("reading ResourceList: %w", err)
	}
	config, items, err := DecodeResourceList(data)
	if err != nil {
		return err
	}

	out, err := run(config, items, o)
	if err != nil {
		return err
	}
	out = dropGeneratorEcho(config, out)
	return kio.ByteWriter{
		Writer:                w,
		KeepReaderAnnotations: true,
		WrappingKind:          kio.ResourceListKind,
		WrappingAPIVersion:    kio.ResourceListAPIVersion,
		FunctionConfig:        config,
	}.Write(out)
}

// ServeEnv is the environment variable that tells a binary built with this
// package to act as a KRM function (see ServeIfRequested). Runner sets it
// in the exec function specs it writes.
const ServeEnv = "AIRSHIP_KRM_FUNCTION"

// Arguments Runner passes to the function process.
const (
	argImage     = "--image="
	argConfig    = "--config-file="
	argErrorFile = "--error-file="
	// argSecretsFile names a file to create when the sops function runs.
	argSecretsFile = "--secrets-file="
)

// ServeIfRequested makes the running binary a KRM function when ServeEnv
// is set: it serves stdin to stdout and reports the exit code to use. Call
// it first thing in main (and in TestMain of packages that build with
// Runner):
//
//	if code, ok := fn.ServeIfRequested(); ok {
//		os.Exit(code)
//	}
func ServeIfRequested() (code int, served bool) {
	if os.Getenv(ServeEnv) == "" {
		return 0, false
	}
	var o runOptions
	errorFile := ""
	for _, a := range os.Args[1:] {
		switch {
		case strings.HasPrefix(a, argImage):
			o.image = strings.TrimPrefix(a, argImage)
		case strings.HasPrefix(a, argConfig):
			o.file = strings.TrimPrefix(a, argConfig)
		case strings.HasPrefix(a, argErrorFile):
			errorFile = strings.TrimPrefix(a, argErrorFile)
		case strings.HasPrefix(a, argSecretsFile):
			o.target.secretsFile = strings.TrimPrefix(a, argSecretsFile)
		}
	}
	o.target.errorFile = errorFile
	if exe, err := os.Executable(); err == nil {
		o.target.exe = exe
	}
	if err := serve(os.Stdin, os.Stdout, o); err != nil {
		msg := redact(err.Error())
		if errorFile == "" || os.WriteFile(errorFile, []byte(msg), 0o600) != nil {
			fmt.Fprintln(os.Stderr, "Error:", msg)
		}
		return 1, true
	}
	return 0, true
}
