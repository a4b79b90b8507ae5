// Command install-operators installs charts/airship-operators into a
// cluster through the Helm SDK, as `helm upgrade --install` would, with the
// images `make images` built pinned by digest. `make demo` installs the
// target cluster's operators with it, to run as pods on its real node.
//
// Usage: install-operators --kubeconfig FILE [--images bin/images]
// [--values FILE]... [--release airship-operators] [--namespace airship-system]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/installchart"
)

type files []string

func (f *files) String() string     { return fmt.Sprint(*f) }
func (f *files) Set(s string) error { *f = append(*f, s); return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "install-operators:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster (required)")
	images := flag.String("images", "bin/images", "directory `make images` wrote (its kustomization.yaml pins the images by digest); empty keeps the chart's tags")
	chart := flag.String("chart", installchart.ChartDir, "the chart's directory")
	release := flag.String("release", "airship-operators", "release name")
	namespace := flag.String("namespace", "airship-system", "namespace of the release's records")
	timeout := flag.Duration("timeout", 2*time.Minute, "bound of the install (the CRDs' included; the workloads are not waited for)")
	var valueFiles files
	flag.Var(&valueFiles, "values", "values file over the chart's (repeatable; later files win)")
	flag.Parse()
	if *kubeconfig == "" || flag.NArg() > 0 {
		return errors.New("usage: install-operators --kubeconfig FILE [--images DIR] [--values FILE ...]")
	}
	vals := map[string]any{}
	if *images != "" {
		v, err := installchart.ImageValues(*images)
		if err != nil {
			return err
		}
		vals = v
	}
	for _, f := range valueFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var v map[string]any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("values file %s: %w", f, err)
		}
		vals = installchart.MergeValues(vals, v)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := filepath.Abs(*chart)
	if err != nil {
		return err
	}
	rev, err := installchart.Install(ctx, cfg, installchart.InstallOptions{Dir: dir, Release: *release, Namespace: *namespace, Values: vals, Timeout: *timeout})
	if err != nil {
		return err
	}
	fmt.Printf("release %s/%s revision %d\n", *namespace, *release, rev)
	return nil
}
