package fn

import (
	"bytes"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Upstream airshipctl built its sites with kustomize API v0.8.11, which
// dropped every document annotated config.kubernetes.io/local-config as it
// parsed bytes, function output included. kustomize v0.21 keeps such
// documents through the whole build and drops them only from the final
// output of the top-level kustomization.
//
// The difference shows with generator functions: kustomize passes a
// generator its own config, annotated local-config, as the only input item
// (kio would otherwise run nothing), and functions that append to their
// input, as the Templater does, hand it back. Under v0.8.11 the echo
// vanished; under v0.21 it stays in the sub-build's resources, so
//
//   - a kustomization listed under transformers whose own generators run a
//     Templater yields the Templater as a second transformer, which then
//     runs over the parent's documents and adds what it renders to them
//     (upstream's decrypt-secrets leaks its sops ConfigMap that way);
//   - two sub-builds that run the same generator, merged into one parent,
//     fail with "may not add resource with an already registered id"
//     (upstream's controlplane-* and workers-target phases).
//
// dropGeneratorEcho removes that echo from a function's output, which is
// what v0.8.11 did. Only the function's own config is removed, so trees
// that mark their own documents local-config keep kustomize v0.21's
// meaning, and trees without functions are not concerned at all.
func dropGeneratorEcho(config *yaml.RNode, out []*yaml.RNode) []*yaml.RNode {
	if config == nil {
		return out
	}
	kept := out[:0:0]
	for _, n := range out {
		if isLocalConfig(n) && sameObject(n, config) {
			continue
		}
		kept = append(kept, n)
	}
	return kept
}

func isLocalConfig(n *yaml.RNode) bool {
	v, ok := n.GetAnnotations()[konfig.IgnoredByKustomizeAnnotation]
	return ok && v != "false"
}

func sameObject(a, b *yaml.RNode) bool {
	return a.GetApiVersion() == b.GetApiVersion() && a.GetKind() == b.GetKind() &&
		a.GetName() == b.GetName() && a.GetNamespace() == b.GetNamespace()
}

// Annotation pairs kyaml keeps in step: a function's input must not carry
// a legacy annotation that differs from its internal twin.
var legacyAnnotationPairs = [][2]string{
	{kioutil.LegacyPathAnnotation, kioutil.PathAnnotation},
	{kioutil.LegacyIndexAnnotation, kioutil.IndexAnnotation},
	{kioutil.LegacyIdAnnotation, kioutil.IdAnnotation},
}

// pairLegacyAnnotationsInPatch makes a builtin PatchTransformer config that
// sets config.kubernetes.io/path (or index, or id) set the internal twin
// of the annotation too, and reports whether it changed n.
//
// Upstream sites set config.kubernetes.io/path with such a patch to choose
// the file a document is written to (update-secrets' fileplacement).
// kyaml v0.11, which upstream used, knew only that annotation; kyaml v0.21
// also keeps internal.config.kubernetes.io/path, which every function
// output carries, and refuses a function's input where the two differ
// ("mismatched legacy and internal path annotations"). Setting both keeps
// the patch's meaning.
func pairLegacyAnnotationsInPatch(n *yaml.RNode) bool {
	if n.GetApiVersion() != konfig.BuiltinPluginApiVersion || n.GetKind() != "PatchTransformer" {
		return false
	}
	field := mapValue(n.YNode(), "patch")
	if field == nil || field.Kind != yaml.ScalarNode || !strings.Contains(field.Value, "config.kubernetes.io/") {
		return false
	}
	docs, err := kio.FromBytes([]byte(field.Value))
	if err != nil {
		return false // a JSON 6902 patch, or not YAML: kustomize reads it itself
	}
	changed := false
	for _, d := range docs {
		annos := d.GetAnnotations()
		for _, p := range legacyAnnotationPairs {
			v, ok := annos[p[0]]
			if _, has := annos[p[1]]; ok && !has {
				if err := d.PipeE(yaml.SetAnnotation(p[1], v)); err != nil {
					return false
				}
				changed = true
			}
		}
	}
	if !changed {
		return false
	}
	var buf bytes.Buffer
	if err := (kio.ByteWriter{Writer: &buf}).Write(docs); err != nil {
		return false
	}
	field.Value, field.Style, field.Tag = buf.String(), yaml.LiteralStyle, "!!str"
	return true
}
