package phase

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// TreeNode is a kustomize root or file and what it includes.
type TreeNode struct {
	// Kind is Kustomization, Resource, Component, Patch, Generator,
	// Transformer, Validator, ConfigMapGenerator, or Missing.
	Kind     string      `json:"kind"`
	Path     string      `json:"path"`
	Children []*TreeNode `json:"children,omitempty"`
}

// Tree reads the kustomization at root and what it includes, recursively.
// Paths are shown relative to base. A missing file is a Missing node, not an error.
func Tree(root, base string) (*TreeNode, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if base != "" {
		if base, err = filepath.Abs(base); err != nil {
			return nil, err
		}
	}
	return tree(abs, base, map[string]bool{})
}

func rel(base, p string) string {
	if base == "" {
		return p
	}
	if r, err := filepath.Rel(base, p); err == nil {
		return r
	}
	return p
}

func tree(dir, base string, visiting map[string]bool) (*TreeNode, error) {
	node := &TreeNode{Kind: "Kustomization", Path: rel(base, dir)}
	if visiting[dir] {
		node.Kind = "Cycle"
		return node, nil
	}
	visiting[dir] = true
	defer delete(visiting, dir)
	var kfile string
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			kfile = filepath.Join(dir, n)
			break
		}
	}
	if kfile == "" {
		return nil, fmt.Errorf("%s has no kustomization file (%v)", dir, konfig.RecognizedKustomizationFileNames())
	}
	data, err := os.ReadFile(kfile)
	if err != nil {
		return nil, err
	}
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", kfile, err)
	}
	add := func(kind, ref string) error {
		if strings.Contains(ref, "://") || strings.HasPrefix(ref, "github.com/") {
			node.Children = append(node.Children, &TreeNode{Kind: "Remote" + kind, Path: ref})
			return nil
		}
		p := filepath.Join(dir, ref)
		st, err := os.Stat(p)
		switch {
		case err != nil:
			node.Children = append(node.Children, &TreeNode{Kind: "Missing" + kind, Path: rel(base, p)})
		case st.IsDir():
			child, err := tree(p, base, visiting)
			if err != nil {
				return err
			}
			if kind != "Resource" {
				child.Kind = kind
			}
			node.Children = append(node.Children, child)
		default:
			node.Children = append(node.Children, &TreeNode{Kind: kind, Path: rel(base, p)})
		}
		return nil
	}
	groups := []struct {
		kind string
		refs []string
	}{
		//nolint:staticcheck // Bases is deprecated, but sites written for older kustomize still list entry points there.
		{"Resource", append(append([]string{}, k.Resources...), k.Bases...)},
		{"Component", k.Components},
		{"Generator", k.Generators},
		{"Transformer", k.Transformers},
		{"Validator", k.Validators},
		{"Patch", patchFiles(k)},
	}
	for _, g := range groups {
		for _, r := range g.refs {
			if err := add(g.kind, r); err != nil {
				return nil, err
			}
		}
	}
	for _, g := range k.ConfigMapGenerator {
		node.Children = append(node.Children, &TreeNode{Kind: "ConfigMapGenerator", Path: g.Name})
	}
	for _, g := range k.SecretGenerator {
		node.Children = append(node.Children, &TreeNode{Kind: "SecretGenerator", Path: g.Name})
	}
	return node, nil
}

func patchFiles(k types.Kustomization) []string {
	var out []string
	for _, p := range k.Patches {
		if p.Path != "" {
			out = append(out, p.Path)
		}
	}
	for _, p := range k.PatchesStrategicMerge { //nolint:staticcheck // older sites still use it
		if ps := string(p); !strings.Contains(ps, "\n") {
			out = append(out, ps)
		}
	}
	sort.Strings(out)
	return out
}

// Print draws the tree with box-drawing characters.
func (n *TreeNode) Print(w io.Writer) {
	fmt.Fprintf(w, "%s [%s]\n", n.Path, n.Kind)
	n.printChildren(w, "")
}

func (n *TreeNode) printChildren(w io.Writer, prefix string) {
	for i, c := range n.Children {
		last := i == len(n.Children)-1
		branch, next := "├── ", "│   "
		if last {
			branch, next = "└── ", "    "
		}
		fmt.Fprintf(w, "%s%s%s [%s]\n", prefix, branch, c.Path, c.Kind)
		c.printChildren(w, prefix+next)
	}
}
