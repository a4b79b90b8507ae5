package refs

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		refs []Ref
		want []string // substrings of the error; none: no error
	}{
		{name: "no refs"},
		{name: "namespace omitted", refs: []Ref{{Field: "spec.userData"}}},
		{name: "own namespace", refs: []Ref{{Field: "spec.userData", Namespace: "tenant"}}},
		{name: "other namespace", refs: []Ref{{Field: "spec.userData", Namespace: "kube-system"}},
			want: []string{`spec.userData.namespace: must be the BareMetalHost's namespace "tenant", not "kube-system"`}},
		{name: "each bad field named", refs: []Ref{{Field: "spec.userData", Namespace: "a"}, {Field: "spec.metaData", Namespace: "tenant"}, {Field: "spec.networkData", Namespace: "b"}},
			want: []string{"spec.userData.namespace", "spec.networkData.namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check("BareMetalHost", "tenant", tt.refs...)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Check() = %v, want nil", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrOtherNamespace) {
				t.Fatalf("Check() = %v, want an error wrapping ErrOtherNamespace", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Check() = %q, want it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "spec.metaData") {
				t.Errorf("Check() = %q names spec.metaData, which is in the host's namespace", err)
			}
		})
	}
}
