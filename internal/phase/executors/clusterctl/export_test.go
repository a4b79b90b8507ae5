package clusterctl

import (
	"fmt"

	ctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"

	"github.com/airshipit/airship-go/internal/phase/executor"
)

// WriteRunRepository writes the local clusterctl repository run installs
// the providers of init-options from, into dir.
func (e *Executor) WriteRunRepository(dir string) error {
	entries, err := e.initEntries()
	if err != nil {
		return err
	}
	return e.writeRepository(dir, entries, ctlconfig.NewMemoryReader())
}

// StopBeforeMoving makes ex, a Clusterctl move, stop the way a run that
// dies half-way does: just before clusterctl moves namespace ns, after the
// namespaces before it moved.
func StopBeforeMoving(ex executor.Executor, ns string) {
	ex.(*Executor).beforeMove = func(n string) error {
		if n == ns {
			return fmt.Errorf("stopped before moving namespace %q (test)", n)
		}
		return nil
	}
}
