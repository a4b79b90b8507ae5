// Command airshipctl manages Airship sites: documents, phases, plans and the
// local control plane.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/root"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := root.Main(ctx, os.Args[1:], cli.System())
	stop()
	os.Exit(code)
}
