// Command armada-operator runs the Armada operator: it installs the Helm
// charts that ArmadaChart, ArmadaChartGroup and ArmadaManifest objects
// describe, in order, and keeps them in their target state.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/airshipit/airship-go/internal/armada/operator"
)

func main() { os.Exit(run()) }

func run() int {
	opts := operator.DefaultOptions()
	zopts := zap.Options{}
	fs := flag.NewFlagSet("armada-operator", flag.ContinueOnError)
	opts.BindFlags(fs)
	zopts.BindFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	log := zap.New(zap.UseFlagOptions(&zopts))
	ctrl.SetLogger(log)
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintf(os.Stderr, "armada-operator: %v\n", err)
		return 1
	}
	if err := operator.Run(ctrl.SetupSignalHandler(), cfg, opts, log); err != nil {
		fmt.Fprintf(os.Stderr, "armada-operator: %v\n", err)
		return 1
	}
	return 0
}
