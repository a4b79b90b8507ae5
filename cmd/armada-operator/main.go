// Command armada-operator runs the Armada operator: it installs the Helm
// charts that ArmadaChart, ArmadaChartGroup and ArmadaManifest objects
// describe, in order, and keeps them in their target state.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
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
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster to run against (default: in-cluster config, then $KUBECONFIG, then ~/.kube/config)")
	zopts.BindFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	log := zap.New(zap.UseFlagOptions(&zopts))
	ctrl.SetLogger(log)
	cfg, err := restConfig(*kubeconfig)
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

// restConfig reads the kubeconfig file given, or finds the configuration the
// usual way when none is.
func restConfig(path string) (*rest.Config, error) {
	if path == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}
