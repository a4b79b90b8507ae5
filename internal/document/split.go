package document

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// The split build.
//
// krusty keeps a root's resources in one list and checks every resource it
// adds against every one already there, so a root of n resources costs
// about n² identity computations (more than 90 % of a 5,000-document
// build). A root whose transformations are all made per resource gives the
// same result when its resources are built in parts and the parts' outputs
// put together: splitBuild does that, in parallel, and only where it can
// show the result is the plain build's. Everywhere else, and whenever a
// check after the parts fails, the caller builds the root plainly.
//
// What makes a root splittable:
//   - its kustomization uses only per-resource fields (splitFields): no
//     generators, plugin transformers, components, vars, sort options or
//     Helm charts, every patch has a target, and no patch may rename;
//   - its resources are local files (no directory, no remote), each a YAML
//     stream that splits at its document markers into one object per part;
//   - no two resources share an identity.
//
// What crosses resources, and how the parts keep it:
//   - name references (kustomize's nameReference: a Deployment naming a
//     ConfigMap gets the ConfigMap's prefixed name): two resources go in
//     the same part when a scalar of one equals the name of the other, a
//     superset of every reference kustomize follows, whatever field it is
//     in;
//   - replacements: every resource a replacement source could select (by
//     kind and name), with what it references, goes in every part, so each
//     part reads the same sources; their outputs must then be the same in
//     every part, and one copy is kept;
//   - identities: the parts' outputs must not repeat an identity (the
//     namespace transformer can make two collide), and the final order is
//     the one the plain build gives (kustomize's legacy order, or the
//     input order), which must be strict.
//
// Each part's output is checked against its input (same count once local
// configs are dropped, same kinds, each name holding its input name); a
// part that fails to build, or any check that fails, discards the split.

// splitTuning sets when a root is split and into parts of what size.
// Tests lower it.
var splitTuning = struct {
	minDocs, partDocs int
}{minDocs: 400, partDocs: 150}

// splitFields are the kustomization fields a split root may use.
var splitFields = map[string]bool{
	"apiVersion": true, "kind": true, "metadata": true,
	"resources": true, "buildMetadata": true,
	"namePrefix": true, "nameSuffix": true, "namespace": true,
	"commonLabels": true, "labels": true, "commonAnnotations": true,
	"images": true, "patches": true, "replacements": true,
}

// splitDoc is one object of a split root's resources.
type splitDoc struct {
	file  int
	text  []byte
	id    resid.ResId
	local bool
	// values are the object's scalar values (not keys), for the
	// reference graph.
	values []string
}

// splitPlan is a root split into parts.
type splitPlan struct {
	// files are the resource files, each under the paths kustomize may
	// read it by; origins are their paths as the kustomization lists
	// them, which kustomize's origin annotation records.
	files   [][]string
	origins []string
	// kustomization, when set, is served to the parts in place of the
	// kustomization file (at its paths): the file as written, without the
	// origin tracking Build asks kustomize for, which costs a copy of
	// every transformer's name in every resource. The split build then
	// sets each output's origin itself.
	kustomization      []byte
	kustomizationPaths []string
	docs               []splitDoc
	// parts hold document indexes, ascending; every part holds the
	// replicated documents.
	parts      [][]int
	replicated map[int]bool
}

// splitBuild builds root in parts (see above). ok false means it could
// not show the parts give the plain build's result: the caller builds
// plainly, and reports that build's errors.
// read holds the resource files it read, by every path kustomize may read
// them by, so the plain build need not read them again.
func splitBuild(fsys filesys.FileSystem, root string, kopts *krusty.Options, functions FunctionRunner) (res []*resource.Resource, secrets, ok bool, read map[string][]byte) {
	read = map[string][]byte{}
	plan, why := planSplit(fsys, root, read)
	if why != "" {
		return nil, false, false, read
	}
	res, secrets, err := plan.build(fsys, root, kopts, functions)
	if err != nil {
		return nil, false, false, read
	}
	return res, secrets, true, read
}

// planSplit reads root's kustomization and resources and splits them, or
// says why it will not. Each resource file it reads goes in read (when
// not nil), under each path kustomize may read it by.
func planSplit(fsys filesys.FileSystem, root string, read map[string][]byte) (*splitPlan, string) {
	kfile := ""
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if p := filepath.Join(root, n); fsys.Exists(p) {
			if kfile != "" {
				return nil, "several kustomization files"
			}
			kfile = p
		}
	}
	if kfile == "" {
		return nil, "no kustomization file"
	}
	data, err := fsys.ReadFile(kfile)
	if err != nil {
		return nil, "unreadable kustomization"
	}
	raw := data
	if rec, ok := fsys.(*recordingFS); ok {
		if raw, err = rec.FileSystem.ReadFile(kfile); err != nil {
			return nil, "unreadable kustomization"
		}
	}
	var asWritten map[string]any
	if err := yaml.Unmarshal(raw, &asWritten); err != nil {
		return nil, "malformed kustomization"
	}
	var fields map[string]any
	if err := yaml.Unmarshal(data, &fields); err != nil {
		return nil, "malformed kustomization"
	}
	for f := range fields {
		if !splitFields[f] {
			return nil, "field " + f
		}
	}
	var k types.Kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return nil, "malformed kustomization"
	}
	if k.Kind != "" && k.Kind != types.KustomizationKind {
		return nil, "kind " + k.Kind
	}
	for _, p := range k.Patches {
		if p.Target == nil {
			return nil, "a patch without a target"
		}
		if p.Options != nil && (p.Options.AllowNameChange || p.Options.AllowKindChange) {
			return nil, "a patch that may rename"
		}
	}
	sources, why := replacementSources(fsys, root, k.Replacements)
	if why != "" {
		return nil, why
	}
	plan := &splitPlan{}
	confirmed, _, cerr := fsys.CleanedAbs(root)
	if _, ok := asWritten["buildMetadata"]; !ok {
		plan.kustomization = raw
		plan.kustomizationPaths = []string{kfile}
		if cerr == nil {
			if q := filepath.Join(string(confirmed), filepath.Base(kfile)); q != kfile {
				plan.kustomizationPaths = append(plan.kustomizationPaths, q)
			}
		}
	}
	seen := map[string]bool{}
	for _, e := range k.Resources {
		if e == "" || strings.Contains(e, "://") || strings.HasPrefix(e, "github.com/") || strings.HasPrefix(e, "git@") {
			return nil, "a remote resource"
		}
		p := e
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		p = filepath.Clean(p)
		if seen[p] {
			return nil, "a resource listed twice"
		}
		seen[p] = true
		if !fsys.Exists(p) || fsys.IsDir(p) {
			return nil, "a resource that is not a file"
		}
		paths := []string{p}
		if cerr == nil && !filepath.IsAbs(e) {
			if q := filepath.Join(string(confirmed), e); q != p {
				paths = append(paths, q)
			}
		}
		text, err := fsys.ReadFile(p)
		if err != nil {
			return nil, "an unreadable resource"
		}
		if read != nil {
			for _, q := range paths {
				read[q] = text
			}
		}
		pieces, ok := splitStream(text)
		if !ok {
			return nil, "a YAML stream it cannot split"
		}
		file := len(plan.files)
		plan.files = append(plan.files, paths)
		plan.origins = append(plan.origins, filepath.Clean(e))
		for _, piece := range pieces {
			plan.docs = append(plan.docs, splitDoc{file: file, text: piece})
		}
	}
	if len(plan.docs) < splitTuning.minDocs {
		return nil, "too few documents"
	}
	if why := plan.parse(); why != "" {
		return nil, why
	}
	if why := plan.partition(sources); why != "" {
		return nil, why
	}
	return plan, ""
}

// replacementSource is what a replacement's source selects by.
type replacementSource struct{ kind, name string }

// replacementSources reads the sources of a kustomization's replacements,
// inline or from files.
func replacementSources(fsys filesys.FileSystem, root string, fields []types.ReplacementField) ([]replacementSource, string) {
	var out []replacementSource
	add := func(r types.Replacement) string {
		if r.Source == nil {
			return ""
		}
		if r.Source.Kind == "" && r.Source.Name == "" {
			return "a replacement whose source may be any resource"
		}
		out = append(out, replacementSource{kind: r.Source.Kind, name: r.Source.Name})
		return ""
	}
	for _, f := range fields {
		if f.Path == "" {
			if why := add(f.Replacement); why != "" {
				return nil, why
			}
			continue
		}
		p := f.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		data, err := fsys.ReadFile(p)
		if err != nil {
			return nil, "an unreadable replacements file"
		}
		var list []types.Replacement
		if err := yaml.Unmarshal(data, &list); err != nil {
			var one types.Replacement
			if err := yaml.Unmarshal(data, &one); err != nil {
				return nil, "a malformed replacements file"
			}
			list = []types.Replacement{one}
		}
		for _, r := range list {
			if why := add(r); why != "" {
				return nil, why
			}
		}
	}
	return out, ""
}

// splitStream cuts a YAML stream at its document markers ("---" at the
// start of a line, which YAML forbids inside any scalar). A stream with
// directives, document end markers, or content on a marker's line is not
// cut.
func splitStream(data []byte) ([][]byte, bool) {
	var pieces [][]byte
	start := 0
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		line := bytes.TrimRight(data[off:next], "\r\n")
		switch {
		case bytes.HasPrefix(line, []byte("---")):
			rest := line[3:]
			if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' {
				break // "----" or "---x": content, not a marker
			}
			if t := bytes.TrimSpace(rest); len(t) > 0 && t[0] != '#' {
				return nil, false
			}
			pieces = append(pieces, data[start:off])
			start = next
		case bytes.HasPrefix(line, []byte("...")), bytes.HasPrefix(line, []byte("%")):
			return nil, false
		}
		off = next
	}
	pieces = append(pieces, data[start:])
	out := pieces[:0]
	for _, p := range pieces {
		if len(bytes.TrimSpace(p)) > 0 {
			out = append(out, p)
		}
	}
	return out, true
}

// parse decodes every document, in parallel, and checks identities.
func (p *splitPlan) parse() string {
	whys := make([]string, len(p.docs))
	parallel(len(p.docs), func(i int) {
		whys[i] = p.docs[i].parse()
	})
	for _, w := range whys {
		if w != "" {
			return w
		}
	}
	ids := make(map[string]bool, len(p.docs))
	for _, d := range p.docs {
		k := identityKey(d.id)
		if ids[k] {
			return "two resources with one identity"
		}
		ids[k] = true
	}
	return ""
}

func (d *splitDoc) parse() string {
	dec := kyaml.NewDecoder(bytes.NewReader(d.text))
	var n kyaml.Node
	if err := dec.Decode(&n); err != nil {
		if errors.Is(err, io.EOF) {
			// comments only: a part of nothing, which kustomize skips
			d.text = nil
			return ""
		}
		return "a document that does not parse"
	}
	var extra kyaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return "a part with more than one document"
	}
	if n.Kind != kyaml.DocumentNode || len(n.Content) != 1 || n.Content[0].Kind != kyaml.MappingNode {
		return "a document that is not an object"
	}
	obj := n.Content[0]
	apiVersion := scalarAt(obj, "apiVersion")
	kind := scalarAt(obj, "kind")
	md := mappingValue(obj, "metadata")
	if kind == "" || strings.HasSuffix(kind, "List") || md == nil || md.Kind != kyaml.MappingNode {
		return "a document without kind or metadata, or a list"
	}
	name := scalarAt(md, "name")
	if name == "" {
		return "a document without a name"
	}
	if ann := mappingValue(md, "annotations"); ann != nil {
		if ann.Kind != kyaml.MappingNode {
			return "annotations that are not an object"
		}
		if v := mappingValue(ann, konfig.IgnoredByKustomizeAnnotation); v != nil {
			d.local = v.Value != "false"
		}
	}
	group, version := resid.ParseGroupVersion(apiVersion)
	d.id = resid.NewResIdWithNamespace(resid.Gvk{Group: group, Version: version, Kind: kind}, name, scalarAt(md, "namespace"))
	seen := map[string]bool{}
	var walk func(*kyaml.Node)
	walk = func(x *kyaml.Node) {
		switch x.Kind {
		case kyaml.ScalarNode:
			if x.Value != "" && !seen[x.Value] {
				seen[x.Value] = true
				d.values = append(d.values, x.Value)
			}
		case kyaml.MappingNode:
			for i := 1; i < len(x.Content); i += 2 {
				walk(x.Content[i])
			}
		case kyaml.SequenceNode, kyaml.DocumentNode:
			for _, c := range x.Content {
				walk(c)
			}
		}
	}
	walk(obj)
	return ""
}

func scalarAt(m *kyaml.Node, key string) string {
	if v := mappingValue(m, key); v != nil && v.Kind == kyaml.ScalarNode {
		return v.Value
	}
	return ""
}

// identityKey is kustomize's identity of a resource: its group, version,
// kind and name, and its namespace as kustomize compares them (none for a
// cluster-scoped kind, "default" for no namespace).
func identityKey(id resid.ResId) string {
	return id.Gvk.String() + "|" + id.EffectiveNamespace() + "|" + id.Name
}

// partition groups the documents that reference each other and packs the
// groups into parts; the groups of replacement sources go in every part.
func (p *splitPlan) partition(sources []replacementSource) string {
	n := len(p.docs)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[rb] = ra
		}
	}
	byName := map[string][]int{}
	for i, d := range p.docs {
		if d.text != nil {
			byName[d.id.Name] = append(byName[d.id.Name], i)
		}
	}
	for i, d := range p.docs {
		for _, v := range d.values {
			for _, j := range byName[v] {
				union(i, j)
			}
		}
	}
	replicatedRoots := map[int]bool{}
	for i, d := range p.docs {
		if d.text == nil {
			continue
		}
		for _, s := range sources {
			if (s.kind == "" || s.kind == d.id.Kind) && (s.name == "" || strings.Contains(s.name, d.id.Name)) {
				replicatedRoots[find(i)] = true
			}
		}
	}
	groups := map[int][]int{}
	var order []int
	p.replicated = map[int]bool{}
	for i, d := range p.docs {
		if d.text == nil {
			continue
		}
		r := find(i)
		if replicatedRoots[r] {
			p.replicated[i] = true
			continue
		}
		if _, ok := groups[r]; !ok {
			order = append(order, r)
		}
		groups[r] = append(groups[r], i)
	}
	if len(p.replicated) > splitTuning.partDocs {
		return "too many documents that replacements read"
	}
	var part []int
	for _, r := range order {
		g := groups[r]
		if len(g) > n/2 {
			return "one group of resources referencing each other holds half of them"
		}
		part = append(part, g...)
		if len(part) >= splitTuning.partDocs {
			p.parts = append(p.parts, part)
			part = nil
		}
	}
	if len(part) > 0 {
		p.parts = append(p.parts, part)
	}
	if len(p.parts) < 2 {
		return "one part"
	}
	for i := range p.parts {
		for j := range p.replicated {
			p.parts[i] = append(p.parts[i], j)
		}
		slices.Sort(p.parts[i])
	}
	return ""
}

// filesFS serves the files it holds (by cleaned path) in place of the
// file system's: one part's resource files in place of the whole ones, or
// the files the split read, to the plain build that follows it.
type filesFS struct {
	filesys.FileSystem
	files map[string][]byte
}

func (f *filesFS) ReadFile(path string) ([]byte, error) {
	if data, ok := f.files[filepath.Clean(path)]; ok {
		return data, nil
	}
	return f.FileSystem.ReadFile(path)
}

// partOutput is one part's build.
type partOutput struct {
	res     []*resource.Resource
	secrets bool
	err     error
}

// errSplit is a check after the parts that failed.
var errSplit = errors.New("the split build does not match the plain one")

// build builds the parts and puts their outputs together.
func (p *splitPlan) build(fsys filesys.FileSystem, root string, kopts *krusty.Options, functions FunctionRunner) ([]*resource.Resource, bool, error) {
	opts := *kopts
	// The parts keep the input order; the whole is sorted below.
	opts.Reorder = krusty.ReorderOptionNone
	outs := make([]partOutput, len(p.parts))
	parallel(len(p.parts), func(i int) {
		files := map[string][]byte{}
		bufs := make([]bytes.Buffer, len(p.files))
		for _, d := range p.parts[i] {
			b := &bufs[p.docs[d].file]
			if b.Len() > 0 {
				b.WriteString("---\n")
			}
			b.Write(p.docs[d].text)
			if t := p.docs[d].text; len(t) > 0 && t[len(t)-1] != '\n' {
				b.WriteByte('\n')
			}
		}
		for f, paths := range p.files {
			for _, path := range paths {
				files[path] = bufs[f].Bytes()
			}
		}
		for _, path := range p.kustomizationPaths {
			files[path] = p.kustomization
		}
		o := &outs[i]
		o.res, o.secrets, o.err = buildPlain(&filesFS{FileSystem: fsys, files: files}, root, &opts, functions)
	})
	secrets := false
	// out[d] is document d's output; nil for a local config.
	out := make([]*resource.Resource, len(p.docs))
	var firstCopy map[int][]byte
	for i, o := range outs {
		if o.err != nil {
			return nil, false, o.err
		}
		secrets = secrets || o.secrets
		var want []int
		for _, d := range p.parts[i] {
			if !p.docs[d].local {
				want = append(want, d)
			}
		}
		if len(want) != len(o.res) {
			return nil, false, fmt.Errorf("%w: part %d gave %d resources for %d", errSplit, i, len(o.res), len(want))
		}
		copies := map[int][]byte{}
		for j, d := range want {
			r := o.res[j]
			in := p.docs[d].id
			if r.GetKind() != in.Kind || !strings.Contains(r.GetName(), in.Name) {
				return nil, false, fmt.Errorf("%w: part %d: %s/%s is not %s", errSplit, i, r.GetKind(), r.GetName(), in)
			}
			if p.kustomization != nil {
				if err := r.SetOrigin(&resource.Origin{Path: p.origins[p.docs[d].file]}); err != nil {
					return nil, false, err
				}
			}
			if !p.replicated[d] {
				out[d] = r
				continue
			}
			y, err := r.AsYAML()
			if err != nil {
				return nil, false, err
			}
			copies[d] = y
			if out[d] == nil {
				out[d] = r
			}
		}
		if firstCopy == nil {
			firstCopy = copies
			continue
		}
		for d, y := range copies {
			if !bytes.Equal(firstCopy[d], y) {
				return nil, false, fmt.Errorf("%w: %s differs between parts", errSplit, p.docs[d].id)
			}
		}
	}
	res := make([]*resource.Resource, 0, len(out))
	for _, r := range out {
		if r != nil {
			res = append(res, r)
		}
	}
	keys := make([]legacyKey, len(res))
	seen := make(map[string]bool, len(res))
	for i, r := range res {
		id := r.CurId()
		k := identityKey(id)
		if seen[k] {
			return nil, false, fmt.Errorf("%w: %s twice", errSplit, id)
		}
		seen[k] = true
		keys[i] = newLegacyKey(id)
	}
	if kopts.Reorder == krusty.ReorderOptionLegacy || kopts.Reorder == krusty.ReorderOptionUnspecified {
		idx := make([]int, len(res))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return keys[idx[a]].less(keys[idx[b]]) })
		sorted := make([]*resource.Resource, len(res))
		for i, j := range idx {
			sorted[i] = res[j]
			if i > 0 && !keys[idx[i-1]].less(keys[j]) {
				return nil, false, fmt.Errorf("%w: %s and %s have no order", errSplit, res[idx[i-1]].CurId(), res[j].CurId())
			}
		}
		res = sorted
	}
	return res, secrets, nil
}

// legacyKey is where kustomize's legacy order puts a resource: first by
// kind (its list of kinds that go first, then every other kind, then its
// kinds that go last), then by group, version and kind, then by
// namespace and name.
type legacyKey struct {
	rank    int
	gvk     resid.Gvk
	gvkSort string
	idSort  string
}

// The kinds kustomize's legacy order puts first and last.
var (
	legacyFirst = []string{
		"Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition",
		"ServiceAccount", "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding",
		"ClusterRoleBinding", "ConfigMap", "Secret", "Endpoints", "Service",
		"LimitRange", "PriorityClass", "PersistentVolume", "PersistentVolumeClaim",
		"Deployment", "StatefulSet", "CronJob", "PodDisruptionBudget",
	}
	legacyLast = []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
)

func newLegacyKey(id resid.ResId) legacyKey {
	k := legacyKey{gvk: id.Gvk}
	if i := slices.Index(legacyFirst, id.Kind); i >= 0 {
		k.rank = i - len(legacyFirst)
	} else if i := slices.Index(legacyLast, id.Kind); i >= 0 {
		k.rank = i + 1
	}
	or := func(s, none string) string {
		if s == "" {
			return none
		}
		return s
	}
	k.gvkSort = or(id.Group, "~G") + "_" + or(id.Version, "~V") + "_" + or(id.Kind, "~K")
	k.idSort = id.Gvk.String() + "|" + or(id.Namespace, "~X") + "|" + or(id.Name, "~N")
	return k
}

func (a legacyKey) less(b legacyKey) bool {
	if !a.gvk.Equals(b.gvk) {
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.gvk.Kind == "Namespace" && b.gvk.Kind == "Namespace" && (a.gvk.Group == "" || b.gvk.Group == "") {
			return a.gvkSort > b.gvkSort
		}
		return a.gvkSort < b.gvkSort
	}
	return a.idSort < b.idSort
}

// parallel calls f(0) … f(n-1) on as many goroutines as there are CPUs.
func parallel(n int, f func(int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
