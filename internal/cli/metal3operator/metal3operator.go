package metal3operator

import (
	"github.com/airshipit/airship-go/internal/cli/operatorcmd"
	"github.com/airshipit/airship-go/internal/metal3/operator"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// Spec is the metal3-operator binary: run it with operatorcmd.Main.
var Spec = operatorcmd.Spec[operator.Options]{
	Name:  "metal3-operator",
	Short: "Drive BareMetalHosts through registering, inspection, provisioning and deprovisioning over their BMCs' Redfish",
	Example: `  # In a pod: in-cluster configuration, leader election in the pod's namespace
  metal3-operator --leader-elect --metrics-bind-address=:8080 --health-probe-bind-address=:8081

  # Out of a cluster, against the local control plane
  metal3-operator --kubeconfig ~/.airship/local/kubeconfig --metrics-bind-address=0 --health-probe-bind-address=127.0.0.1:8082`,
	Defaults: operator.DefaultOptions,
	Bind:     (*operator.Options).BindFlags,
	Shared:   func(o *operator.Options) *operatorkit.Options { return &o.Options },
	Validate: operator.Options.Validate,
	Run:      operator.Run,
}
