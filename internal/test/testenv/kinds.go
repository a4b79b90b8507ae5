package testenv

import "testing"

// ExpectKinds builds the kustomization at dir (as Kustomize does) and
// fails t for every kind of want it does not hold exactly that many of:
// the operators' tests that their config/<operator>/default builds.
func ExpectKinds(t testing.TB, dir string, want map[string]int) {
	t.Helper()
	kinds := map[string]int{}
	for _, u := range Kustomize(t, dir) {
		kinds[u.GetKind()]++
	}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%s has %d %s, want %d (all kinds: %v)", dir, kinds[k], k, n, kinds)
		}
	}
}
