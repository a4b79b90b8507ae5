package v1alpha1

import "testing"

func TestRepoCheckoutValidate(t *testing.T) {
	tests := []struct {
		name string
		co   *RepoCheckout
		ok   bool
	}{
		{"none: the default branch", nil, true},
		{"empty", &RepoCheckout{Force: true}, true},
		{"branch", &RepoCheckout{Branch: "main", LocalBranch: true}, true},
		{"remote ref", &RepoCheckout{RemoteRef: "refs/changes/04/691202/5"}, true},
		{"branch and tag", &RepoCheckout{Branch: "main", Tag: "v1"}, false},
		{"commit and remote ref", &RepoCheckout{CommitHash: "abc", RemoteRef: "refs/x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.co.Validate(); (err == nil) != tt.ok {
				t.Fatalf("Validate() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
