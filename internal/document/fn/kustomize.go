package fn

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigyaml "sigs.k8s.io/yaml"
)

// PluginConfig is the kustomize plugin configuration of every build the
// project runs: builtin plugins only, so kustomize refuses every exec,
// container, starlark, Go or legacy exec plugin itself; exec functions
// off; Helm chart inflation off (it would run a helm binary).
func PluginConfig() *types.PluginConfig {
	pc := types.MakePluginConfig(types.PluginRestrictionsBuiltinsOnly, types.BploUseStaticallyLinked)
	pc.FnpLoadingOptions = types.FnPluginLoadingOptions{}
	pc.HelmConfig = types.HelmConfig{Enabled: false}
	return pc
}

// KrustyOptions returns a copy of opts (nil: krusty's defaults) whose
// plugin configuration is PluginConfig's, whatever opts had. Every
// krusty.MakeKustomizer in the project takes its options from here.
func KrustyOptions(opts *krusty.Options) *krusty.Options {
	if opts == nil {
		opts = krusty.MakeDefaultOptions()
	}
	o := *opts
	o.PluginConfig = PluginConfig()
	return &o
}

// Runner builds kustomizations with krusty, in process, running the
// built-in KRM functions (ReplacementTransformer, Templater, the sops
// function) in process too. kustomize itself never runs a plugin that is
// not one of its builtins (KrustyOptions); Runner hands it a file system
// that serves, for every kustomization whose generators, transformers or
// validators include a function config, an equivalent kustomization
// without it: the part before the function is built, the function runs on
// the result, and kustomize reads the result as a resource file (see
// doc.go). A function config that is not built in is an
// *UnsupportedFunctionError naming the config and its file; nothing is
// ever executed.
type Runner struct{}

// Build runs krusty on path with the built-in functions.
func (r *Runner) Build(fsys filesys.FileSystem, path string, opts *krusty.Options) (resmap.ResMap, error) {
	m, _, err := r.BuildSecrets(fsys, path, opts)
	return m, err
}

// BuildSecrets is Build that also tells whether the build ran a function
// that handles secrets: the sops function, whether it came from a file or
// from another function's output, and whatever it decrypted, encrypted or
// left alone. Its output may then hold clear secrets, and depends on the
// keys in the environment, so it must not be cached
// (document.SecretFunctionRunner).
func (r *Runner) BuildSecrets(fsys filesys.FileSystem, path string, opts *krusty.Options) (resmap.ResMap, bool, error) {
	root, err := filepath.Abs(path)
	if err != nil {
		return nil, false, fmt.Errorf("building %s: %w", path, err)
	}
	root = filepath.Clean(root)
	o := KrustyOptions(opts)
	stageOpts := *o
	// Stages keep the order resources are accumulated in; the top-level
	// build sorts as asked.
	stageOpts.Reorder = krusty.ReorderOptionNone
	b := &build{root: root, opts: &stageOpts, virtual: map[string][]byte{}}
	wfs := &functionFS{FileSystem: fsys, b: b}
	m, err := krusty.MakeKustomizer(o).Run(wfs, root)
	if ferr := b.firstErr(); ferr != nil {
		// kustomize reports a kustomization it could not read as a
		// missing one; the reason is ours.
		return nil, false, ferr
	}
	if err != nil {
		return nil, false, redactError(err)
	}
	if err := b.finish(wfs, m); err != nil {
		return nil, false, err
	}
	return m, b.handledSecrets(), nil
}

// build is the state of one top-level build.
type build struct {
	root string
	opts *krusty.Options

	mu      sync.Mutex
	virtual map[string][]byte
	n       int
	secrets bool
	err     error
}

func (b *build) fail(err error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
	}
	return err
}

func (b *build) firstErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func (b *build) handledSecrets() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.secrets
}

func (b *build) markSecrets() {
	b.mu.Lock()
	b.secrets = true
	b.mu.Unlock()
}

// addVirtual stores data as a file in dir that only this build's file
// system serves, and returns its name relative to dir.
func (b *build) addVirtual(dir string, data []byte) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n++
	name := ".airship-function-output-" + strconv.Itoa(b.n) + ".yaml"
	b.virtual[filepath.Join(dir, name)] = data
	return name
}

func (b *build) virtualFile(path string) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.virtual[filepath.Clean(path)]
	return data, ok
}

// functionFS serves kustomize the kustomizations of a tree with their
// function configs run (see Runner). override, in the file system of one
// stage, is the kustomization that stage builds.
type functionFS struct {
	filesys.FileSystem
	b        *build
	override map[string][]byte
}

func (f *functionFS) ReadFile(path string) ([]byte, error) {
	if data, ok := f.override[filepath.Clean(path)]; ok {
		return data, nil
	}
	if data, ok := f.b.virtualFile(path); ok {
		return data, nil
	}
	data, err := f.FileSystem.ReadFile(path)
	if err != nil || !isKustomizationFile(path) {
		return data, err
	}
	out, err := f.kustomization(path, data)
	if err != nil {
		return nil, f.b.fail(err)
	}
	return out, nil
}

func (f *functionFS) Exists(path string) bool {
	if _, ok := f.override[filepath.Clean(path)]; ok {
		return true
	}
	if _, ok := f.b.virtualFile(path); ok {
		return true
	}
	return f.FileSystem.Exists(path)
}

func (f *functionFS) IsDir(path string) bool {
	if _, ok := f.b.virtualFile(path); ok {
		return false
	}
	return f.FileSystem.IsDir(path)
}

// CleanedAbs is the file system's, except for this build's own files,
// which it does not know (a root-only load restriction asks).
func (f *functionFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	if _, ok := f.b.virtualFile(path); ok {
		d, name := filepath.Split(filepath.Clean(path))
		dir, _, err := f.FileSystem.CleanedAbs(d)
		return dir, name, err
	}
	return f.FileSystem.CleanedAbs(path)
}

func isKustomizationFile(path string) bool {
	return slices.Contains(konfig.RecognizedKustomizationFileNames(), filepath.Base(path))
}

// Kustomization fields whose entries are plugin configs: inline YAML, a
// file, or a directory whose build yields the configs.
const (
	fieldGenerators   = "generators"
	fieldTransformers = "transformers"
	fieldValidators   = "validators"
)

// plugin is one plugin config a kustomization lists, and what runs it.
type plugin struct {
	node *yaml.RNode
	// file is where the config came from, for errors.
	file string
	// fn is the built-in function that runs it; nil for kustomize's
	// own builtin plugins (apiVersion: builtin).
	fn *function
}

// function is a config the built-in functions run.
type function struct {
	image string
}

// kustomization is a kustomization being rewritten: its fields, with the
// plugin fields expanded into configs.
type kustomization struct {
	path, dir string
	fields    *yaml.RNode
	plugins   map[string][]plugin
}

var resmapFactory = resmap.NewFactory(provider.NewDepProvider().GetResourceFactory())

// kustomization returns what kustomize reads for the kustomization file at
// path: data itself when it lists no function config, else an equivalent
// kustomization without function configs, the functions having run.
func (f *functionFS) kustomization(path string, data []byte) ([]byte, error) {
	node, err := yaml.Parse(string(data))
	if err != nil || node.YNode().Kind != yaml.MappingNode {
		return data, nil // kustomize reports it in its own words
	}
	if err := f.refuseRemote(path, node); err != nil {
		return nil, err
	}
	for _, field := range helmFields {
		if v := mapValue(node.YNode(), field); v != nil && !isNull(v) && len(v.Content) > 0 {
			return nil, fmt.Errorf("%s: field %s: %w", path, field, errHelm)
		}
	}
	k := &kustomization{path: path, dir: filepath.Dir(path), fields: node, plugins: map[string][]plugin{}}
	any := false
	for _, field := range []string{fieldGenerators, fieldTransformers, fieldValidators} {
		entries, err := stringList(node, field)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(entries) == 0 {
			continue
		}
		ps, err := f.expand(k, field, entries)
		if err != nil {
			return nil, err
		}
		k.plugins[field] = ps
		for _, p := range ps {
			any = any || p.fn != nil
		}
	}
	if !any {
		return data, nil
	}
	if kind := node.GetKind(); kind == types.ComponentKind {
		return nil, fmt.Errorf("%s: a Component may not list KRM functions among its generators, transformers or validators; "+
			"list them in the kustomization that uses the component", path)
	}
	for {
		done, err := f.runFirstFunction(k)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	return k.bytes()
}

// stringList reads a kustomization field that is a list of strings.
func stringList(n *yaml.RNode, field string) ([]string, error) {
	v := mapValue(n.YNode(), field)
	if v == nil || isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("field %s is %s, not a list", field, kindName(v))
	}
	out := make([]string, 0, len(v.Content))
	for i, el := range v.Content {
		if el.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s[%d] is %s, not a string", field, i, kindName(el))
		}
		out = append(out, el.Value)
	}
	return out, nil
}

// expand reads the configs of a plugin field's entries, as kustomize
// does: an entry that parses as YAML documents is inline, else it is a
// file, else a directory to build.
func (f *functionFS) expand(k *kustomization, field string, entries []string) ([]plugin, error) {
	var out []plugin
	for i, e := range entries {
		where := fmt.Sprintf("%s (%s[%d])", k.path, field, i)
		if rm, err := resmapFactory.NewResMapFromBytes([]byte(e)); err == nil {
			for _, r := range rm.Resources() {
				p, err := classify(r.RNode.Copy(), where, field)
				if err != nil {
					return nil, err
				}
				out = append(out, p)
			}
			continue
		}
		p := e
		if !filepath.IsAbs(p) {
			p = filepath.Join(k.dir, p)
		}
		switch {
		case f.IsDir(p):
			nodes, err := f.stage(p, nil, true)
			if err != nil {
				return nil, fmt.Errorf("%s: building %s: %w", where, e, err)
			}
			for _, n := range nodes {
				file := p
				if o := originOf(n); o != nil && o.Path != "" && o.Repo == "" {
					file = filepath.Join(f.b.root, o.Path)
				}
				pl, err := classify(n, file, field)
				if err != nil {
					return nil, err
				}
				out = append(out, pl)
			}
		case f.Exists(p):
			data, err := f.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("%s: reading %s: %w", where, e, err)
			}
			rm, err := resmapFactory.NewResMapFromBytes(data)
			if err != nil {
				return nil, fmt.Errorf("%s: reading %s: %w", where, p, err)
			}
			for _, r := range rm.Resources() {
				pl, err := classify(r.RNode.Copy(), p, field)
				if err != nil {
					return nil, err
				}
				out = append(out, pl)
			}
		default:
			return nil, fmt.Errorf("%s: %q is neither a file nor a directory of the site "+
				"(generators, transformers and validators must be local)", where, e)
		}
	}
	return out, nil
}

// pathFields are the kustomization fields whose entries name files or
// directories (or, for the plugin fields, inline configs).
var pathFields = []string{"resources", "bases", "components", "crds", "configurations", fieldGenerators, fieldTransformers, fieldValidators}

// refuseRemote fails on an entry that names a remote target: kustomize
// fetches a URL and, when that fails or the URL names a repository,
// clones it by running git. A build reads the site only.
func (f *functionFS) refuseRemote(path string, node *yaml.RNode) error {
	dir := filepath.Dir(path)
	for _, field := range pathFields {
		entries, err := stringList(node, field)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for i, e := range entries {
			if !isRemote(e) {
				continue
			}
			if _, err := resmapFactory.NewResMapFromBytes([]byte(e)); err == nil {
				continue // an inline config
			}
			if !filepath.IsAbs(e) && f.Exists(filepath.Join(dir, e)) {
				continue
			}
			return fmt.Errorf("%s: %s[%d] %q is remote: a build reads the site only and fetches nothing "+
				"(kustomize would download it, or clone it by running git); vendor it into the site", path, field, i, e)
		}
	}
	return nil
}

// isRemote reports whether a kustomization entry has the shape of a URL
// or a repository (scheme://..., git@host:..., git::..., host.tld/...).
func isRemote(e string) bool {
	if strings.Contains(e, "://") || strings.HasPrefix(e, "git@") || strings.HasPrefix(e, "git::") {
		return true
	}
	first, _, _ := strings.Cut(e, "/")
	return first != "." && first != ".." && strings.Contains(first, ".") && strings.Contains(e, "/") && !strings.HasSuffix(first, ".yaml") && !strings.HasSuffix(first, ".yml")
}

// Helm chart inflation runs a helm program; kustomize is built with it
// off, and a kustomization that asks for it is refused by name.
var (
	helmFields = []string{"helmCharts", "helmChartInflationGenerator"}
	errHelm    = errors.New("chart inflation runs a helm program, which a build never does; " +
		"render the chart beforehand and list its output under resources")
)

const helmGeneratorKind = "HelmChartInflationGenerator"

// legacyPluginImage is what an error shows as the "image" of a plugin
// config without a function annotation, which kustomize would otherwise
// look for as an exec or Go plugin in its plugin home.
const legacyPluginImage = "(none: a kustomize exec/Go plugin config)"

// classify decides what runs a plugin config: kustomize (apiVersion
// builtin), one of the built-in functions, or nothing (an error naming the
// config and its file). The function spec is read from the decoded
// annotations (config.kubernetes.io/function and its older spellings), so
// no spelling of a key in the file changes the outcome.
func classify(n *yaml.RNode, file, field string) (plugin, error) {
	p := plugin{node: n, file: file}
	if n.GetApiVersion() == konfig.BuiltinPluginApiVersion {
		if n.GetKind() == helmGeneratorKind {
			return p, fmt.Errorf("%s/%s (file %s): %w", n.GetKind(), n.GetName(), file, errHelm)
		}
		return p, nil
	}
	image, err := specImage(n)
	if err != nil {
		return p, fmt.Errorf("%s/%s (file %s): reading its function annotation: %w", n.GetKind(), n.GetName(), file, err)
	}
	unsupported := &UnsupportedFunctionError{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Name: n.GetName(), File: file, Image: image}
	if image == "" {
		image = legacyPluginImage
	}
	unsupported.Image = image
	switch {
	case strings.HasPrefix(image, execImagePrefix):
		return p, unsupported
	case field == fieldValidators:
		unsupported.Field = fieldValidators
		return p, unsupported
	case builtinFunction(n.GetApiVersion(), n.GetKind(), image) == "":
		return p, unsupported
	}
	p.fn = &function{image: image}
	return p, nil
}

// firstFunction is the index of the first function config in ps, or -1.
func firstFunction(ps []plugin) int {
	return slices.IndexFunc(ps, func(p plugin) bool { return p.fn != nil })
}

// Fields of a kustomization, by when kustomize uses them.
var (
	// generatorStageFields are what a build up to and including the
	// generators needs.
	generatorStageFields = []string{"apiVersion", "kind", "metadata", "openapi", "resources", "bases", "crds", "configurations",
		"configMapGenerator", "secretGenerator", "generatorOptions", "helmGlobals", "helmCharts", "helmChartInflationGenerator", "buildMetadata"}
	// generatedFields are done once the generators ran.
	generatedFields = []string{"resources", "bases", "configMapGenerator", "secretGenerator", "generatorOptions",
		"helmGlobals", "helmCharts", "helmChartInflationGenerator"}
	// transformedKeptFields stay once the transformers ran: what
	// describes the result or applies to the top-level build only.
	transformedKeptFields = []string{"apiVersion", "kind", "metadata", "openapi", "crds", "configurations", "buildMetadata", "sortOptions"}
)

// runFirstFunction runs k's first function config and rewrites k to what
// is left, or reports that k has none left.
func (f *functionFS) runFirstFunction(k *kustomization) (done bool, err error) {
	if i := firstFunction(k.plugins[fieldGenerators]); i >= 0 {
		gens := k.plugins[fieldGenerators]
		stage := k.subset(generatorStageFields)
		stage.plugins[fieldGenerators] = gens[:i]
		before, err := f.buildStage(stage)
		if err != nil {
			return false, err
		}
		out, err := f.runFunction(gens[i], nil)
		if err != nil {
			return false, err
		}
		if err := setGeneratedOrigin(out, gens[i], f.b.root); err != nil {
			return false, err
		}
		rest := k.without(generatedFields)
		rest.plugins[fieldGenerators] = gens[i+1:]
		if err := rest.setResources(f.b, append(before, out...)); err != nil {
			return false, err
		}
		*k = *rest
		return false, nil
	}
	if i := firstFunction(k.plugins[fieldTransformers]); i >= 0 {
		trans := k.plugins[fieldTransformers]
		stage := k.without([]string{"sortOptions"})
		stage.plugins[fieldTransformers] = trans[:i]
		delete(stage.plugins, fieldValidators)
		before, err := f.buildStage(stage)
		if err != nil {
			return false, err
		}
		out, err := f.runFunction(trans[i], before)
		if err != nil {
			return false, err
		}
		rest := k.subset(transformedKeptFields)
		rest.plugins[fieldTransformers] = trans[i+1:]
		rest.plugins[fieldValidators] = k.plugins[fieldValidators]
		if err := rest.setResources(f.b, out); err != nil {
			return false, err
		}
		*k = *rest
		return false, nil
	}
	return true, nil
}

// subset is k with only the given fields (and its plugin lists, for the
// caller to set).
func (k *kustomization) subset(fields []string) *kustomization {
	n := yaml.NewMapRNode(nil)
	for _, field := range fields {
		if v := mapValue(k.fields.YNode(), field); v != nil {
			n.YNode().Content = append(n.YNode().Content, yaml.NewScalarRNode(field).YNode(), yaml.CopyYNode(v))
		}
	}
	return &kustomization{path: k.path, dir: k.dir, fields: n, plugins: map[string][]plugin{}}
}

// without is k without the given fields, its plugin lists kept.
func (k *kustomization) without(fields []string) *kustomization {
	n := yaml.NewMapRNode(nil)
	c := k.fields.YNode().Content
	for i := 0; i+1 < len(c); i += 2 {
		if slices.Contains(fields, c[i].Value) {
			continue
		}
		n.YNode().Content = append(n.YNode().Content, yaml.CopyYNode(c[i]), yaml.CopyYNode(c[i+1]))
	}
	plugins := make(map[string][]plugin, len(k.plugins))
	for f, ps := range k.plugins {
		plugins[f] = ps
	}
	return &kustomization{path: k.path, dir: k.dir, fields: n, plugins: plugins}
}

// setResources makes docs k's only resources, through a file only this
// build serves.
func (k *kustomization) setResources(b *build, docs []*yaml.RNode) error {
	data, err := virtualResources(docs)
	if err != nil {
		return fmt.Errorf("%s: %w", k.path, err)
	}
	name := b.addVirtual(k.dir, data)
	return k.fields.PipeE(yaml.SetField("resources", yaml.NewListRNode(name)))
}

// bytes renders k, its plugin configs inline.
func (k *kustomization) bytes() ([]byte, error) {
	n := k.fields.Copy()
	for _, field := range []string{fieldGenerators, fieldTransformers, fieldValidators} {
		if err := n.PipeE(yaml.Clear(field)); err != nil {
			return nil, err
		}
		ps := k.plugins[field]
		if len(ps) == 0 {
			continue
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, p := range ps {
			s, err := p.node.String()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k.path, err)
			}
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Style: yaml.LiteralStyle, Value: s})
		}
		if err := n.PipeE(yaml.SetField(field, yaml.NewRNode(seq))); err != nil {
			return nil, err
		}
	}
	s, err := n.String()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.path, err)
	}
	return []byte(s), nil
}

// buildStage builds k (which lists no function config) and returns its
// documents as they are in the middle of a build.
func (f *functionFS) buildStage(k *kustomization) ([]*yaml.RNode, error) {
	data, err := k.bytes()
	if err != nil {
		return nil, err
	}
	return f.stage(k.dir, map[string][]byte{k.path: data}, false)
}

// Stages are whole krusty builds, which finish as the top-level build
// does: they drop local-config documents, add hash suffixes and remove
// kustomize's build annotations (previous names, prefixes, ...). A stage
// is in the middle of the real build, so before it finishes, builtin
// transformers copy these annotations to keys kustomize does not know
// (local-config is moved, and the hash request switched off), and unstash
// puts them back.
const stashPrefix = "stash.airshipit.org/"

const buildAnnotationDomain = konfig.ConfigAnnoDomain + "/"

// Build annotations a stage keeps. kustomize stores a previous id in
// three lists at once, and a JSON patch stores one more (the current id)
// before it applies; previousIDAnnotations are copied by one patch, first,
// and unstash drops that last entry.
var (
	previousIDAnnotations = []string{
		buildAnnotationDomain + "previousKinds",
		buildAnnotationDomain + "previousNames",
		buildAnnotationDomain + "previousNamespaces",
	}
	hashAnnotation = buildAnnotationDomain + "needsHashSuffix"
	// stashedAnnotations are every annotation unstash puts back.
	stashedAnnotations = append(slices.Clone(previousIDAnnotations),
		buildAnnotationDomain+"prefixes",
		buildAnnotationDomain+"suffixes",
		buildAnnotationDomain+"allowNameChange",
		buildAnnotationDomain+"allowKindChange",
		buildAnnotationDomain+"refBy",
		buildAnnotationDomain+"generatorBehavior",
		hashAnnotation,
		konfig.IgnoredByKustomizeAnnotation,
	)
)

// hashOff is what the hash request reads during a stage's finish.
const hashOff = "stashed"

func stashKey(a string) string { return stashPrefix + a[strings.LastIndex(a, "/")+1:] }

// stashTransformers are the builtin transformers that stash the
// annotations, last among a stage's transformers.
var stashTransformers = func() []string {
	esc := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1") }
	patch := func(name, target string, ops ...[3]string) string {
		var js []string
		for _, o := range ops {
			js = append(js, fmt.Sprintf(`{"op": %q, "from": "/metadata/annotations/%s", "path": "/metadata/annotations/%s"}`, o[0], esc(o[1]), esc(o[2])))
		}
		return fmt.Sprintf("apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: airship-stash-%s\ntarget:\n  annotationSelector: %s\npatch: %s\n",
			name, target, strconv.Quote("["+strings.Join(js, ", ")+"]"))
	}
	var ids [][3]string
	for _, a := range previousIDAnnotations {
		ids = append(ids, [3]string{"copy", a, stashKey(a)})
	}
	out := []string{patch("previous-ids", previousIDAnnotations[1], ids...)}
	for _, a := range stashedAnnotations[len(previousIDAnnotations):] {
		op := "copy"
		if a == konfig.IgnoredByKustomizeAnnotation {
			op = "move"
		}
		out = append(out, patch(strings.ToLower(a[strings.LastIndex(a, "/")+1:]), a, [3]string{op, a, stashKey(a)}))
	}
	// A JSON patch cannot change an internal annotation (kustomize puts
	// them back after it); the annotations transformer can.
	out = append(out, fmt.Sprintf("apiVersion: builtin\nkind: AnnotationsTransformer\nmetadata:\n  name: airship-stash-hash-off\n"+
		"annotations:\n  %s: %s\nfieldSpecs:\n- path: metadata/annotations\n  create: true\n", hashAnnotation, hashOff))
	return out
}()

// stage builds dir with krusty, reading override's files from it instead
// of the file system, and returns the documents with the stashed
// annotations back and origins relative to the top-level root. origins
// asks kustomize for origins whatever the kustomization says (to name the
// file of a plugin config).
func (f *functionFS) stage(dir string, override map[string][]byte, origins bool) ([]*yaml.RNode, error) {
	kpath, data, err := f.stageKustomization(dir, override)
	if err != nil {
		return nil, err
	}
	n, err := yaml.Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: not a kustomization: %w", kpath, err)
	}
	if n.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a kustomization: not a mapping", kpath)
	}
	seq := mapValue(n.YNode(), fieldTransformers)
	if seq == nil || seq.Kind != yaml.SequenceNode {
		seq = &yaml.Node{Kind: yaml.SequenceNode}
		if err := n.PipeE(yaml.SetField(fieldTransformers, yaml.NewRNode(seq))); err != nil {
			return nil, err
		}
	}
	for _, t := range stashTransformers {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Style: yaml.LiteralStyle, Value: t})
	}
	if err := n.PipeE(yaml.Clear("sortOptions")); err != nil {
		return nil, err
	}
	if origins {
		if err := addOriginAnnotations(n); err != nil {
			return nil, fmt.Errorf("%s: %w", kpath, err)
		}
	}
	s, err := n.String()
	if err != nil {
		return nil, err
	}
	sfs := &functionFS{FileSystem: f.FileSystem, b: f.b, override: map[string][]byte{filepath.Clean(kpath): []byte(s)}}
	m, err := krusty.MakeKustomizer(f.b.opts).Run(sfs, dir)
	if ferr := f.b.firstErr(); ferr != nil {
		return nil, ferr
	}
	if err != nil {
		return nil, f.b.fail(redactError(err))
	}
	out := make([]*yaml.RNode, 0, m.Size())
	for _, r := range m.Resources() {
		node := r.RNode.Copy()
		if err := unstash(node, dir, f.b.root); err != nil {
			return nil, err
		}
		out = append(out, node)
	}
	return out, nil
}

// stageKustomization finds dir's kustomization file and what a stage
// builds from it: override's content when given, else the file as this
// file system serves it (function configs run).
func (f *functionFS) stageKustomization(dir string, override map[string][]byte) (string, []byte, error) {
	for p, data := range override {
		return p, data, nil
	}
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, name)
		if !f.FileSystem.Exists(p) {
			continue
		}
		data, err := f.ReadFile(p)
		return p, data, err
	}
	return "", nil, fmt.Errorf("%s has no kustomization file (%v)", dir, konfig.RecognizedKustomizationFileNames())
}

// addOriginAnnotations adds originAnnotations to a kustomization's
// buildMetadata.
func addOriginAnnotations(n *yaml.RNode) error {
	meta := mapValue(n.YNode(), "buildMetadata")
	if meta == nil || meta.Kind != yaml.SequenceNode {
		return n.PipeE(yaml.SetField("buildMetadata", yaml.NewListRNode(types.OriginAnnotations)))
	}
	for _, m := range meta.Content {
		if m.Value == types.OriginAnnotations {
			return nil
		}
	}
	meta.Content = append(meta.Content, yaml.NewStringRNode(types.OriginAnnotations).YNode())
	return nil
}

// originStash keeps a document's origin in a file kustomize reads as
// resources (kustomize would replace it with that file's path).
const originStash = stashPrefix + "origin"

// unstash puts the stashed annotations of a stage's document back, and
// makes its origin relative to root (a stage's origins are relative to
// its own directory, dir).
func unstash(n *yaml.RNode, dir, root string) error {
	annos := n.GetAnnotations()
	changed := false
	if annos[hashAnnotation] == hashOff {
		delete(annos, hashAnnotation)
		changed = true
	}
	for _, a := range stashedAnnotations {
		if v, ok := annos[stashKey(a)]; ok {
			if slices.Contains(previousIDAnnotations, a) {
				// The stashing patch's own entry is the last.
				if i := strings.LastIndex(v, ","); i >= 0 {
					v = v[:i]
				} else {
					v = ""
				}
			}
			if v == "" && slices.Contains(previousIDAnnotations, a) {
				delete(annos, a)
			} else {
				annos[a] = v
			}
			delete(annos, stashKey(a))
			changed = true
		}
	}
	if v, ok := annos[originStash]; ok {
		delete(annos, originStash)
		if v == "" {
			delete(annos, originAnnotation)
		} else {
			annos[originAnnotation] = v
		}
		changed = true
	} else if v, ok := annos[originAnnotation]; ok {
		rebased, err := rebaseOrigin(v, dir, root)
		if err != nil {
			return fmt.Errorf("%s: %w", docID(n), err)
		}
		if rebased != v {
			annos[originAnnotation] = rebased
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return n.SetAnnotations(annos)
}

const originAnnotation = "config.kubernetes.io/origin"

func originOf(n *yaml.RNode) *resource.Origin {
	v, ok := n.GetAnnotations()[originAnnotation]
	if !ok {
		return nil
	}
	var o resource.Origin
	if err := sigyaml.Unmarshal([]byte(v), &o); err != nil {
		return nil
	}
	return &o
}

func rebaseOrigin(v, dir, root string) (string, error) {
	if dir == root {
		return v, nil
	}
	var o resource.Origin
	if err := sigyaml.Unmarshal([]byte(v), &o); err != nil {
		return "", fmt.Errorf("reading annotation %s: %w", originAnnotation, err)
	}
	if o.Repo != "" {
		return v, nil
	}
	rebase := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		if r, err := filepath.Rel(root, filepath.Join(dir, p)); err == nil {
			return r
		}
		return p
	}
	o.Path = rebase(o.Path)
	o.ConfiguredIn = rebase(o.ConfiguredIn)
	return o.String()
}

// setGeneratedOrigin gives a generator function's documents the origin
// kustomize gives a generator's output.
func setGeneratedOrigin(docs []*yaml.RNode, g plugin, root string) error {
	in := g.file
	if r, err := filepath.Rel(root, strings.SplitN(g.file, " (", 2)[0]); err == nil {
		in = r
	}
	o := resource.Origin{ConfiguredIn: in, ConfiguredBy: yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{APIVersion: g.node.GetApiVersion(), Kind: g.node.GetKind()},
		NameMeta: yaml.NameMeta{Name: g.node.GetName(), Namespace: g.node.GetNamespace()},
	}}
	s, err := o.String()
	if err != nil {
		return err
	}
	for _, d := range docs {
		if err := d.PipeE(yaml.SetAnnotation(originAnnotation, s)); err != nil {
			return fmt.Errorf("%s: %w", docID(d), err)
		}
	}
	return nil
}

// virtualResources renders docs as the resource file kustomize reads, each
// origin stashed.
func virtualResources(docs []*yaml.RNode) ([]byte, error) {
	var sb strings.Builder
	for i, d := range docs {
		d = d.Copy()
		annos := d.GetAnnotations()
		if _, ok := annos[originStash]; !ok {
			annos[originStash] = annos[originAnnotation]
			if err := d.SetAnnotations(annos); err != nil {
				return nil, err
			}
		}
		s, err := d.String()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", docID(d), err)
		}
		if i > 0 {
			sb.WriteString("---\n")
		}
		sb.WriteString(s)
	}
	return []byte(sb.String()), nil
}

// runFunction runs a function config in process: over items for a
// transformer, with no input for a generator (items nil).
func (f *functionFS) runFunction(p plugin, items []*yaml.RNode) ([]*yaml.RNode, error) {
	config := p.node.Copy()
	if err := config.PipeE(yaml.SetAnnotation(konfig.IgnoredByKustomizeAnnotation, "true")); err != nil {
		return nil, err
	}
	input := items
	if items == nil {
		// A generator is handed its own config, as kustomize does; the
		// echo is dropped below.
		input = []*yaml.RNode{config.Copy()}
	}
	out, err := run(config, input, runOptions{image: p.fn.image, file: p.file, onSecrets: f.b.markSecrets})
	if err != nil {
		return nil, f.b.fail(err)
	}
	out = dropGeneratorEcho(config, out)
	if items != nil {
		out = keepOrder(items, out)
	}
	return out, nil
}

// keepOrder orders a transformer's output as kustomize merges it into the
// build: documents that were in the input keep their place, new ones
// follow in the function's order, removed ones are gone.
func keepOrder(in, out []*yaml.RNode) []*yaml.RNode {
	pos := make(map[string]int, len(in))
	for i, n := range in {
		pos[objectKey(n)] = i
	}
	kept := make([]*yaml.RNode, len(in))
	var added []*yaml.RNode
	for _, n := range out {
		if i, ok := pos[objectKey(n)]; ok && kept[i] == nil {
			kept[i] = n
			continue
		}
		added = append(added, n)
	}
	res := make([]*yaml.RNode, 0, len(out))
	for _, n := range kept {
		if n != nil {
			res = append(res, n)
		}
	}
	return append(res, added...)
}

func objectKey(n *yaml.RNode) string {
	return n.GetApiVersion() + "|" + n.GetKind() + "|" + n.GetNamespace() + "|" + n.GetName()
}

// finish puts the origins of documents that went through a function back
// (or removes them when the top-level build did not keep origins).
func (b *build) finish(fsys filesys.FileSystem, m resmap.ResMap) error {
	keep := false
	for _, r := range m.Resources() {
		if _, ok := r.GetAnnotations()[originAnnotation]; ok {
			keep = true
			break
		}
	}
	for _, r := range m.Resources() {
		annos := r.GetAnnotations()
		v, ok := annos[originStash]
		if !ok {
			continue
		}
		delete(annos, originStash)
		delete(annos, originAnnotation)
		if keep && v != "" {
			annos[originAnnotation] = v
		}
		if err := r.SetAnnotations(annos); err != nil {
			return fmt.Errorf("%s: %w", r.CurId(), err)
		}
	}
	return nil
}
