// Command armada-operator runs the Armada operator: it installs the Helm
// charts that ArmadaChart, ArmadaChartGroup and ArmadaManifest objects
// describe, in order, and keeps them in their target state.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/armadaoperatorcmd"
	"github.com/airshipit/airship-go/internal/cli/operatorcmd"
)

func main() {
	os.Exit(operatorcmd.Main(ctrl.SetupSignalHandler(), os.Args[1:], cli.StdStreams(), armadaoperatorcmd.Spec))
}
