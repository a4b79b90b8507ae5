// Package executors registers every executor; import it for its side
// effect so the phase engine knows them all.
package executors

import (
	// Each executor registers itself with the executor registry.
	_ "github.com/airshipit/airship-go/internal/phase/executors/baremetalmanager"
	_ "github.com/airshipit/airship-go/internal/phase/executors/clusterctl"
	_ "github.com/airshipit/airship-go/internal/phase/executors/genericcontainer"
	_ "github.com/airshipit/airship-go/internal/phase/executors/kubernetesapply"
)
