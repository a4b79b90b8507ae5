package document_test

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// TestBuildMatchesKubectlKustomize compares the in-process build with the
// peer users run today. (An external test: internal/cluster/local writes
// kubeconfigs through internal/cluster/kubeconfig, which reads documents.)
func TestBuildMatchesKubectlKustomize(t *testing.T) {
	kubectl := testtool.Path(t, "kubectl", local.DefaultBinDir())
	want, err := exec.CommandContext(t.Context(), kubectl, "kustomize", "testdata/build/overlay").Output()
	if err != nil {
		t.Fatal(err)
	}
	b, err := document.Build("testdata/build/overlay", document.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("differs from kubectl kustomize:\n--- ours ---\n%s\n--- kubectl ---\n%s", got, want)
	}
}
