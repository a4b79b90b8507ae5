package armadaoperatorcmd

import (
	"github.com/airshipit/airship-go/internal/armada/armadaoperator"
	"github.com/airshipit/airship-go/internal/cli/operatorcmd"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// Spec is the armada-operator binary: run it with operatorcmd.Main.
var Spec = operatorcmd.Spec[armadaoperator.Options]{
	Name:  "armada-operator",
	Short: "Install the Helm charts that ArmadaChart, ArmadaChartGroup and ArmadaManifest objects describe, in order, and keep them in their target state",
	Example: `  # In a pod: in-cluster configuration, leader election in the pod's namespace
  armada-operator --leader-elect --metrics-bind-address=:8080 --health-probe-bind-address=:8081

  # Out of a cluster, charts on disk below ./site
  armada-operator --kubeconfig ~/.airship/local/kubeconfig --chart-root ./site`,
	Defaults: armadaoperator.DefaultOptions,
	Bind:     (*armadaoperator.Options).BindFlags,
	Shared:   func(o *armadaoperator.Options) *operatorkit.Options { return &o.Options },
	Validate: armadaoperator.Options.Validate,
	Run:      armadaoperator.Run,
}
