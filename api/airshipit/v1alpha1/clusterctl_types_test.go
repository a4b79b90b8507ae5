package v1alpha1

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Upstream airshipctl's documents give init-options' provider lists as one
// comma-separated string; ours as YAML lists. Both read the same.
func TestProviderListForms(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
		err       string
	}{
		{"upstream string", `bootstrap-providers: "kubeadm:v1.14.2"`, []string{"kubeadm:v1.14.2"}, ""},
		{"upstream comma-separated", `bootstrap-providers: "kubeadm:v1.14.2, talos:v0.6.0,"`, []string{"kubeadm:v1.14.2", "talos:v0.6.0"}, ""},
		{"list", "bootstrap-providers:\n- kubeadm:v1.14.2\n- talos:v0.6.0", []string{"kubeadm:v1.14.2", "talos:v0.6.0"}, ""},
		{"empty string", `bootstrap-providers: ""`, nil, ""},
		{"a number", `bootstrap-providers: 3`, nil, "want a list of name:version providers or one comma-separated string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o InitOptions
			err := yaml.UnmarshalStrict([]byte(tc.doc), &o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.BootstrapProviders, tc.want) {
				t.Errorf("got %q, want %q", o.BootstrapProviders, tc.want)
			}
		})
	}
}
