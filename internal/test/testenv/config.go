package testenv

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/airshipit/airship-go/internal/document/fn"
)

// Kustomize builds the kustomization at dir, relative to the repository
// root (such as config/sip/rbac), in-process, and returns its objects: the
// operators' tests install their manifests from it.
func Kustomize(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	resMap, err := krusty.MakeKustomizer(fn.KrustyOptions(nil)).Run(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range resMap.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

// FreeAddr returns a loopback address with a port that was free a moment
// ago, for a listener (probes, metrics) the code under test opens itself.
func FreeAddr(t testing.TB) string {
	t.Helper()
	addr, err := PickFreeAddr(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// PickFreeAddr is FreeAddr for code without a test at hand (a TestMain's).
func PickFreeAddr(ctx context.Context) (string, error) {
	l, err := new(net.ListenConfig).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }() // only probed for its port
	return l.Addr().String(), nil
}
