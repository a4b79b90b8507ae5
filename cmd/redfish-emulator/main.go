// Command redfish-emulator serves emulated bare-metal hosts over Redfish,
// for the BareMetalHost controller and its tests where there is no
// hardware.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/redfishemulator"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := redfishemulator.Main(ctx, os.Args[1:], cli.StdStreams())
	stop()
	os.Exit(code)
}
