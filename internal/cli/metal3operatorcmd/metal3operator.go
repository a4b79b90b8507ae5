package metal3operatorcmd

import (
	"github.com/airshipit/airship-go/internal/cli/operatorcmd"
	"github.com/airshipit/airship-go/internal/metal3/metal3operator"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// Spec is the metal3-operator binary: run it with operatorcmd.Main.
var Spec = operatorcmd.Spec[metal3operator.Options]{
	Name:  "metal3-operator",
	Short: "Drive BareMetalHosts through registering, inspection, provisioning and deprovisioning over their BMCs' Redfish",
	Example: `  # In a pod: in-cluster configuration, leader election in the pod's namespace
  metal3-operator --leader-elect --metrics-bind-address=:8080 --health-probe-bind-address=:8081

  # Out of a cluster, against the local control plane
  metal3-operator --kubeconfig ~/.airship/local/kubeconfig --metrics-bind-address=0 --health-probe-bind-address=127.0.0.1:8082`,
	Defaults: metal3operator.DefaultOptions,
	Bind:     (*metal3operator.Options).BindFlags,
	Shared:   func(o *metal3operator.Options) *operatorkit.Options { return &o.Options },
	Validate: metal3operator.Options.Validate,
	Run:      metal3operator.Run,
}
