package sipoperatorcmd

import (
	"github.com/airshipit/airship-go/internal/cli/operatorcmd"
	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/sip/sipoperator"
)

// Spec is the sip-operator binary: run it with operatorcmd.Main.
var Spec = operatorcmd.Spec[sipoperator.Options]{
	Name:  "sip-operator",
	Short: "Pick BareMetalHosts for tenant clusters by role and topology (SIPCluster), label them, and run each cluster's load balancers, jump host and OIDC provider",
	Example: `  # In a pod: in-cluster configuration, leader election in the pod's namespace
  sip-operator --leader-elect --metrics-bind-address=:8080 --health-probe-bind-address=:8081

  # Out of a cluster, against the local control plane
  sip-operator --kubeconfig ~/.airship/local/kubeconfig --metrics-bind-address=0 --health-probe-bind-address=127.0.0.1:8083`,
	Defaults: sipoperator.DefaultOptions,
	Bind:     (*sipoperator.Options).BindFlags,
	Shared:   func(o *sipoperator.Options) *operatorkit.Options { return &o.Options },
	Validate: sipoperator.Options.Validate,
	Run:      sipoperator.Run,
}
