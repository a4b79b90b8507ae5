// Command chart generates the Helm chart charts/airship-operators from the
// kustomize build of config/default (see internal/installchart). `make
// generate` runs it from the repository root; `make verify` fails when the
// committed chart differs from what it writes.
//
// Usage: chart [--config config/default] [--out charts/airship-operators]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/airshipit/airship-go/internal/installchart"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
}

func run() error {
	config := flag.String("config", installchart.ConfigDir, "kustomization the chart is generated from")
	out := flag.String("out", installchart.ChartDir, "the chart's directory (its content is replaced)")
	flag.Parse()
	objs, err := installchart.Kustomize(*config)
	if err != nil {
		return err
	}
	files, err := installchart.Generate(objs)
	if err != nil {
		return err
	}
	return installchart.Write(*out, files)
}
