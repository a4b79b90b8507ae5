// Command sip-operator runs the SIPCluster controller: it picks
// BareMetalHosts for tenant clusters by role and topology, labels them and
// runs each cluster's load balancers, jump host and OIDC provider.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/operatorcmd"
	"github.com/airshipit/airship-go/internal/cli/sipoperatorcmd"
)

func main() {
	os.Exit(operatorcmd.Main(ctrl.SetupSignalHandler(), os.Args[1:], cli.StdStreams(), sipoperatorcmd.Spec))
}
