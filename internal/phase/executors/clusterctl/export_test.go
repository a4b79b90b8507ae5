package clusterctl

import ctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"

// WriteRunRepository writes the local clusterctl repository run installs
// the providers of init-options from, into dir.
func (e *Executor) WriteRunRepository(dir string) error {
	entries, err := e.initEntries()
	if err != nil {
		return err
	}
	return e.writeRepository(dir, entries, ctlconfig.NewMemoryReader())
}
