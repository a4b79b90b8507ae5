package cli

import (
	"time"

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
