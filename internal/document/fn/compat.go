package fn

import (
	"sigs.k8s.io/kustomize/api/konfig"
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
