// Command promenade generates a site's PKI, genesis and join scripts from
// Promenade configuration documents, and serves join scripts over HTTP.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/promenade"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := promenade.Main(ctx, os.Args[1:], cli.StdStreams())
	stop()
	os.Exit(code)
}
