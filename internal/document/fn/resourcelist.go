package fn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// UnsupportedFunctionError is returned for a function config this package
// does not implement. Nothing is ever run in its place: there is no
// container runtime, and exec functions are never run.
type UnsupportedFunctionError struct {
	APIVersion, Kind, Name string
	// File is the file the config came from, when known.
	File string
	// Image is the container image (or "exec:" and the path) the config's
	// function annotation named.
	Image string
	// Field is the kustomization field that listed the config, when that
	// is why it is refused (validators).
	Field string
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
	why := ""
	switch {
	case strings.HasPrefix(image, execImagePrefix):
		why = "; exec functions are never run"
	case e.Field != "":
		why = "; the built-in functions are not validators"
	}
	return fmt.Sprintf("KRM function %s/%s (apiVersion %q, image %s%s) is not supported%s: "+
		"airshipctl runs only %s %s and %s, and the %s image's function, in process and has no container runtime",
		e.Kind, e.Name, e.APIVersion, image, where, why, APIVersion, KindReplacementTransformer, KindTemplater, SopsImage)
}

// execImagePrefix marks, in an UnsupportedFunctionError's Image, an exec
// function's path.
const execImagePrefix = "exec:"

// runOptions carry what a build knows beyond the config and the items.
type runOptions struct {
	entropy Entropy
	// image is the function image the config's annotation named; empty
	// means read it from the annotation.
	image string
	// file is the config's file, for errors.
	file string
	// onSecrets, when set, is called before the sops function runs.
	onSecrets func()
}

// Run runs the function config on items and returns the resulting items,
// dispatching on the config's apiVersion and kind (and, for the sops
// function, its image). A config this package does not implement, or one
// whose annotation names an exec function, is an *UnsupportedFunctionError.
func Run(config *yaml.RNode, items []*yaml.RNode) ([]*yaml.RNode, error) {
	return run(config, items, runOptions{})
}

// builtinFunction names the built-in function that runs a config of this
// apiVersion and kind whose annotation names image, or "".
func builtinFunction(apiVersion, kind, image string) string {
	if strings.HasPrefix(image, execImagePrefix) {
		return ""
	}
	if apiVersion == APIVersion {
		switch kind {
		case KindReplacementTransformer:
			return BuiltinReplacementTransformer
		case KindTemplater:
			return BuiltinTemplater
		}
	}
	if b, _ := BuiltinImage(image); b == BuiltinSops {
		return BuiltinSops
	}
	return ""
}

func run(config *yaml.RNode, items []*yaml.RNode, o runOptions) ([]*yaml.RNode, error) {
	if config == nil || config.IsNilOrEmpty() {
		return nil, errors.New("the ResourceList has no functionConfig")
	}
	if config.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the function config is %s, not an object", kindName(config.YNode()))
	}
	if _, err := config.GetMeta(); err != nil {
		// kyaml's accessors panic on a metadata that is not a map.
		return nil, fmt.Errorf("the function config's apiVersion, kind or metadata: %w", err)
	}
	file := o.file
	if file == "" {
		file = docPath(config)
	}
	id := config.GetKind() + "/" + config.GetName()
	if file != "" {
		id += " (file " + file + ")"
	}
	image := o.image
	if image == "" {
		var err error
		if image, err = specImage(config); err != nil {
			return nil, fmt.Errorf("%s: reading its function annotation: %w", id, err)
		}
	}
	var f kio.Filter
	var err error
	switch builtinFunction(config.GetApiVersion(), config.GetKind(), image) {
	case BuiltinReplacementTransformer:
		f, err = NewReplacementTransformer(config)
	case BuiltinTemplater:
		f, err = NewTemplater(config, o.entropy)
	case BuiltinSops:
		// Tell the build first: whatever happens next, its output may
		// hold clear secrets or depend on the keys in the environment.
		if o.onSecrets != nil {
			o.onSecrets()
		}
		f, err = NewSops(config)
	default:
		return nil, &UnsupportedFunctionError{APIVersion: config.GetApiVersion(), Kind: config.GetKind(), Name: config.GetName(), File: file, Image: image}
	}
	if err != nil {
		return nil, redactError(err)
	}
	out, err := f.Filter(items)
	if err != nil {
		return nil, redactError(fmt.Errorf("%s: %w", id, err))
	}
	return out, nil
}

// specImage is the image (or "exec:" and the path) a config's function
// annotation names, or "" when it has none. The annotation is read from
// the decoded document, in any of its spellings
// (config.kubernetes.io/function, config.k8s.io/function,
// config.kubernetes.io/container, metadata.configFn).
func specImage(config *yaml.RNode) (string, error) {
	spec, err := runtimeutil.GetFunctionSpec(config)
	if err != nil || spec == nil {
		return "", err
	}
	if spec.Container.Image != "" {
		return spec.Container.Image, nil
	}
	if spec.Exec.Path != "" {
		return execImagePrefix + spec.Exec.Path, nil
	}
	return "", nil
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
