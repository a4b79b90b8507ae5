package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// AddTimeoutFlag registers --timeout, the one name every command uses for
// how long it waits, with --wait-timeout as a hidden alias for scripts
// written against earlier releases.
func AddTimeoutFlag(fs *pflag.FlagSet, p *time.Duration, def time.Duration, usage string) {
	fs.DurationVar(p, "timeout", def, usage)
	fs.DurationVar(p, "wait-timeout", def, usage)
	_ = fs.MarkHidden("wait-timeout")
}

// AddStateDirFlag registers --state-dir on cmd, the parent of a local
// service's up, down and status (`cluster local`, `ironic local`), as a
// persistent flag so that each of them reads the same directory: where up
// keeps the service's state and PID records and down and status find
// them. holds says what the directory holds; envVar names the environment
// variable that sets def, the default.
func AddStateDirFlag(cmd *cobra.Command, p *string, def, holds, envVar string) {
	cmd.PersistentFlags().StringVar(p, "state-dir", def, fmt.Sprintf("directory holding %s ($%s)", holds, envVar))
}
