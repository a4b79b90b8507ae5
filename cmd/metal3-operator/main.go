// Command metal3-operator runs the BareMetalHost controller: it registers,
// inspects, provisions and deprovisions bare-metal hosts over their BMCs'
// Redfish, as metal3.io/v1alpha1 BareMetalHost objects ask.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/metal3operatorcmd"
	"github.com/airshipit/airship-go/internal/cli/operatorcmd"
)

func main() {
	os.Exit(operatorcmd.Main(ctrl.SetupSignalHandler(), os.Args[1:], cli.StdStreams(), metal3operatorcmd.Spec))
}
