package metal3operatorcmd

import (
	"github.com/airshipit/airship-go/internal/cli/operatorcmd"
	"github.com/airshipit/airship-go/internal/metal3/metal3operator"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// Spec is the metal3-operator binary: run it with operatorcmd.Main.
var Spec = operatorcmd.Spec[metal3operator.Options]{
	Name:  "metal3-operator",
	Short: "Drive BareMetalHosts through registering, inspection, provisioning and deprovisioning, over Ironic or their BMCs' Redfish",
	Example: `  # In a pod: in-cluster configuration, leader election in the pod's namespace
  metal3-operator --leader-elect --metrics-bind-address=:8080 --health-probe-bind-address=:8081

  # Out of a cluster, against the local control plane
  metal3-operator --kubeconfig ~/.airship/local/kubeconfig --metrics-bind-address=0 --health-probe-bind-address=127.0.0.1:8082

  # Hosts provisioned by an Ironic (http_basic credentials in a 0600 YAML file)
  metal3-operator --ironic-endpoint https://ironic.metal3:6385 --ironic-credentials-file /etc/ironic/auth.yaml \
    --ironic-ca-file /etc/ironic/ca.pem --deploy-iso http://172.22.0.1/images/ipa.iso`,
	Defaults: metal3operator.DefaultOptions,
	Bind:     (*metal3operator.Options).BindFlags,
	Shared:   func(o *metal3operator.Options) *operatorkit.Options { return &o.Options },
	Validate: metal3operator.Options.Validate,
	Run:      metal3operator.Run,
}
