package document

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/document/fn"
)

// Bundle is the set of documents a kustomize root builds to.
type Bundle struct {
	root string
	docs []*Document
}

// Root is the kustomize root (or file) the bundle was built from.
func (b *Bundle) Root() string { return b.root }

// Documents returns every document, in build order.
func (b *Bundle) Documents() []*Document { return slices.Clone(b.docs) }

// Len is the number of documents.
func (b *Bundle) Len() int { return len(b.docs) }

// NewBundle wraps documents read from root.
func NewBundle(root string, docs []*Document) *Bundle {
	return &Bundle{root: root, docs: docs}
}

// FunctionRunner runs a kustomize build whose kustomizations reference KRM
// functions, in process (internal/document/fn.Runner, the default).
type FunctionRunner interface {
	Build(fs filesys.FileSystem, path string, opts *krusty.Options) (resmap.ResMap, error)
}

// SecretFunctionRunner is a FunctionRunner that also tells whether a build
// ran a function that handles secrets (fn.Runner: the sops function). Such
// a build's output may hold decrypted values and depends on the keys in
// the environment, so Build never caches it. Builds by a FunctionRunner
// that cannot tell are not cached either.
type SecretFunctionRunner interface {
	FunctionRunner
	BuildSecrets(fs filesys.FileSystem, path string, opts *krusty.Options) (m resmap.ResMap, secrets bool, err error)
}

// BuildOptions configure Build.
type BuildOptions struct {
	// FS is the filesystem to read from; nil means the disk.
	FS filesys.FileSystem
	// Functions runs the KRM functions a kustomization references; nil
	// means fn.Runner, which runs the built-in functions in process and
	// refuses every other one.
	Functions FunctionRunner
	// Confine, when set, is the directory (a site's targetPath) whose
	// files must stay in it once symbolic links are followed: a file of
	// it that a link leads outside is refused, naming the link. Paths a
	// kustomization writes to lead outside are read as written.
	Confine string
	// Cache, when set, is consulted before building and filled after.
	Cache *Cache
}

// Build runs an in-process kustomize build of root (a directory with a
// kustomization, or a directory of plain YAML files, or one YAML file) and
// returns its documents, each knowing the file it came from.
func Build(root string, opts BuildOptions) (*Bundle, error) {
	fs := opts.FS
	if fs == nil {
		fs = filesys.MakeFsOnDisk()
	}
	if !fs.Exists(root) {
		return nil, fmt.Errorf("kustomize root %s does not exist", root)
	}
	if !fs.IsDir(root) {
		data, err := fs.ReadFile(root)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", root, err)
		}
		return FromYAML(root, data)
	}
	if opts.Cache != nil {
		if b, ok := opts.Cache.get(fs, root); ok {
			return b, nil
		}
	}
	var confined *confinedFS
	if opts.Confine != "" {
		c, err := newConfinedFS(fs, opts.Confine)
		if err != nil {
			return nil, err
		}
		confined = c
		fs = c
		if err := c.check(root); err != nil {
			return nil, err
		}
	}
	if !hasKustomization(fs, root) {
		return nil, fmt.Errorf("kustomize root %s has no kustomization file (%v)", root, konfig.RecognizedKustomizationFileNames())
	}
	rec := newRecordingFS(fs)
	resources, secrets, err := kustomize(rec, root, opts.Functions)
	if err != nil {
		if cerr := confined.firstErr(); cerr != nil {
			// kustomize reports a kustomization it could not read as a
			// missing one; the reason is the confinement.
			err = cerr
		}
		return nil, fmt.Errorf("building %s: %w", root, err)
	}
	docs := make([]*Document, 0, len(resources))
	for _, r := range resources {
		d, err := fromResource(r, rec.userOrigins())
		if err != nil {
			return nil, fmt.Errorf("building %s: %w", root, err)
		}
		docs = append(docs, d)
	}
	b := &Bundle{root: root, docs: docs}
	if opts.Cache != nil {
		if secrets {
			opts.Cache.forget(root)
		} else {
			opts.Cache.put(root, rec.reads(), b)
		}
	}
	return b, nil
}

// hasKustomization says whether root holds a kustomization file.
func hasKustomization(fs filesys.FileSystem, root string) bool {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if fs.Exists(filepath.Join(root, n)) {
			return true
		}
	}
	return false
}

// kustomize builds the kustomization of root, reading through rec, and
// says whether the build may have decrypted something (see
// SecretFunctionRunner): such a build is not cached. A large root whose
// transformations are all per resource is built in parts (splitBuild);
// every other root, and one whose parts fail a check, is built whole.
func kustomize(rec filesys.FileSystem, root string, functions FunctionRunner) ([]*resource.Resource, bool, error) {
	kopts := krusty.MakeDefaultOptions()
	// The order kubectl kustomize prints, and no load restriction: Airship
	// site trees share files across roots (../../function/...), as
	// upstream airshipctl allowed.
	kopts.Reorder = krusty.ReorderOptionLegacy
	kopts.LoadRestrictions = types.LoadRestrictionsNone
	kopts = fn.KrustyOptions(kopts)
	if functions == nil {
		functions = &fn.Runner{}
	}
	res, secrets, ok, read := splitBuild(rec, root, kopts, functions)
	if ok {
		return res, secrets, nil
	}
	// rec recorded those files when the split read them.
	return buildPlain(&filesFS{FileSystem: rec, files: read}, root, kopts, functions)
}

// buildPlain is one krusty build of root through functions.
func buildPlain(fs filesys.FileSystem, root string, kopts *krusty.Options, functions FunctionRunner) ([]*resource.Resource, bool, error) {
	if f, ok := functions.(SecretFunctionRunner); ok {
		m, secrets, err := f.BuildSecrets(fs, root, kopts)
		if err != nil {
			return nil, false, err
		}
		return m.Resources(), secrets, nil
	}
	m, err := functions.Build(fs, root, kopts)
	if err != nil {
		return nil, true, err
	}
	return m.Resources(), true, nil
}

// fromResource turns a kustomize resource into a Document, taking its
// origin from the annotation Build asked kustomize to add, and removing
// that annotation unless the site asked for it itself.
func fromResource(r *resource.Resource, keepOrigin bool) (*Document, error) {
	// The build's resources are dropped once they are documents: the
	// document takes the node as it is.
	node := &r.RNode
	source := ""
	if origin, err := r.GetOrigin(); err == nil && origin != nil {
		source = origin.Path
		if source == "" {
			source = origin.ConfiguredIn
		}
	}
	if !keepOrigin {
		ann := node.GetAnnotations()
		if _, ok := ann[originAnnotation]; ok {
			delete(ann, originAnnotation)
			if err := node.SetAnnotations(ann); err != nil {
				return nil, err
			}
		}
	}
	return &Document{node: node, source: source}, nil
}

const originAnnotation = "config.kubernetes.io/origin"

// FromYAML reads a YAML stream (one or more documents) into a bundle.
// Every document must have apiVersion, kind and metadata.name.
func FromYAML(source string, data []byte) (*Bundle, error) {
	nodes, err := kio.FromBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%s: malformed YAML: %w", source, err)
	}
	var errs []error
	docs := make([]*Document, 0, len(nodes))
	for i, n := range nodes {
		if k := n.YNode().Kind; k != kyaml.MappingNode {
			// kyaml's accessors panic on anything but a map.
			errs = append(errs, fmt.Errorf("%s: document %d is %s, not an object", source, i+1, yamlKindName(k)))
			continue
		}
		if err := checkMetadataShape(n.YNode()); err != nil {
			errs = append(errs, fmt.Errorf("%s: document %d: %w", source, i+1, err))
			continue
		}
		d := &Document{node: n, source: source}
		if err := checkIdentity(d, i); err != nil {
			errs = append(errs, err)
			continue
		}
		docs = append(docs, d)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Bundle{root: source, docs: docs}, nil
}

// checkMetadataShape refuses a metadata, metadata.labels or
// metadata.annotations that is present but not a map: kyaml's accessors
// walk them as key/value pairs and panic on anything else.
func checkMetadataShape(doc *kyaml.Node) error {
	md := mappingValue(doc, "metadata")
	if md == nil || kyaml.IsYNodeNilOrEmpty(md) {
		return nil
	}
	if md.Kind != kyaml.MappingNode {
		return fmt.Errorf("metadata is %s, not an object", yamlKindName(md.Kind))
	}
	for _, field := range []string{"labels", "annotations"} {
		if v := mappingValue(md, field); v != nil && v.Kind != kyaml.MappingNode && !kyaml.IsYNodeNilOrEmpty(v) {
			return fmt.Errorf("metadata.%s is %s, not an object", field, yamlKindName(v.Kind))
		}
	}
	return nil
}

// mappingValue is the value of key in the mapping node m, or nil.
func mappingValue(m *kyaml.Node, key string) *kyaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func yamlKindName(k kyaml.Kind) string {
	switch k {
	case kyaml.SequenceNode:
		return "a list"
	case kyaml.ScalarNode:
		return "a scalar"
	case kyaml.AliasNode:
		return "an alias"
	default:
		return "not a map"
	}
}

func checkIdentity(d *Document, index int) error {
	var missing []string
	if d.APIVersion() == "" {
		missing = append(missing, "apiVersion")
	}
	if d.Kind() == "" {
		missing = append(missing, "kind")
	}
	if d.Name() == "" {
		missing = append(missing, "metadata.name")
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%s: document %d (kind %q, name %q) has no %v", d.source, index+1, d.Kind(), d.Name(), missing)
}

// Select returns the documents matching s, in bundle order.
func (b *Bundle) Select(s Selector) ([]*Document, error) {
	c, err := s.compile()
	if err != nil {
		return nil, err
	}
	var out []*Document
	for _, d := range b.docs {
		if c.matches(d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// SelectOne returns the single document matching s; none or several is an
// error that lists what the bundle has.
func (b *Bundle) SelectOne(s Selector) (*Document, error) {
	docs, err := b.Select(s)
	if err != nil {
		return nil, err
	}
	switch len(docs) {
	case 1:
		return docs[0], nil
	case 0:
		return nil, &NotFoundError{Selector: s, Root: b.root, Candidates: candidates(b.docs, s.Kind)}
	default:
		ids := make([]string, len(docs))
		for i, d := range docs {
			ids[i] = d.ID()
		}
		return nil, &AmbiguousError{Selector: s, Matches: ids}
	}
}

// Filter returns a bundle of the documents matching s.
func (b *Bundle) Filter(s Selector) (*Bundle, error) {
	docs, err := b.Select(s)
	if err != nil {
		return nil, err
	}
	return &Bundle{root: b.root, docs: docs}, nil
}

// Deployable returns a bundle without the documents labelled
// airshipit.org/deploy-k8s: "false".
func (b *Bundle) Deployable() *Bundle {
	var docs []*Document
	for _, d := range b.docs {
		if d.Deployable() {
			docs = append(docs, d)
		}
	}
	return &Bundle{root: b.root, docs: docs}
}

// YAML returns the bundle as a YAML stream.
func (b *Bundle) YAML() ([]byte, error) { return documentsYAML(b.docs) }

// Write writes the bundle as a YAML stream.
func (b *Bundle) Write(w io.Writer) error {
	data, err := b.YAML()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// recordingFS remembers every file a build read, so a cache can tell
// whether a later build would read the same bytes, and injects
// buildMetadata: [originAnnotations] into kustomization files so every
// document knows its file.
type recordingFS struct {
	filesys.FileSystem
	mu        sync.Mutex
	read      map[string][]byte
	userAsked bool
}

func newRecordingFS(fs filesys.FileSystem) *recordingFS {
	return &recordingFS{FileSystem: fs, read: map[string][]byte{}}
}

func (r *recordingFS) ReadFile(path string) ([]byte, error) {
	data, err := r.FileSystem.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.read[path] = data
	r.mu.Unlock()
	if slices.Contains(konfig.RecognizedKustomizationFileNames(), filepath.Base(path)) {
		return r.withOrigins(data), nil
	}
	return data, nil
}

// withOrigins adds originAnnotations to a kustomization's buildMetadata.
// A file that does not parse is returned as is, for kustomize to report.
func (r *recordingFS) withOrigins(data []byte) []byte {
	var k map[string]any
	if err := yaml.Unmarshal(data, &k); err != nil || k == nil {
		return data
	}
	var meta []any
	if existing, ok := k["buildMetadata"].([]any); ok {
		meta = existing
	}
	for _, m := range meta {
		if m == types.OriginAnnotations {
			r.mu.Lock()
			r.userAsked = true
			r.mu.Unlock()
			return data
		}
	}
	k["buildMetadata"] = append(meta, types.OriginAnnotations)
	out, err := yaml.Marshal(k)
	if err != nil {
		return data
	}
	return out
}

func (r *recordingFS) userOrigins() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.userAsked
}

func (r *recordingFS) reads() map[string][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]byte, len(r.read))
	for k, v := range r.read {
		out[k] = v
	}
	return out
}
