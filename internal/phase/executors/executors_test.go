package executors_test

import (
	"slices"
	"testing"

	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/phase/executors"
)

// TestRegister: every executor of the list reaches the registry, and a
// second Register (two commands' worth of site loads) does not trip the
// registry's refusal of a kind registered twice.
func TestRegister(t *testing.T) {
	executors.Register()
	executors.Register()
	want := []string{
		"BaremetalManager.airshipit.org/v1alpha1",
		"Clusterctl.airshipit.org/v1alpha1",
		"GenericContainer.airshipit.org/v1alpha1",
		"KubernetesApply.airshipit.org/v1alpha1",
	}
	if got := executor.Known(); !slices.Equal(got, want) {
		t.Fatalf("Known() = %v, want %v", got, want)
	}
	for gvk := range executors.All() {
		if !executor.IsKnown(gvk) {
			t.Errorf("%s not registered", gvk)
		}
	}
}
