// Command airshipctl manages Airship sites: documents, phases, plans and the
// local control plane.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/root"
)

func main() {
	// Libraries built on controller-runtime (clusterctl's among them) log
	// through its logger; airshipctl reports through its own output, and an
	// unset logger prints a stack trace after 30 s.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := root.Main(ctx, os.Args[1:], cli.StdStreams())
	stop()
	os.Exit(code)
}
