// Package cli holds what every command of the project's three binaries
// shares: IO streams, Run (the one way a root command is executed: errors
// printed once, flag errors exit 2 with the usage), the mapping of errors to
// exit codes, and the --timeout flag. Each noun has its own package below it
// (cluster/local, phase, plan, ...) with a NewCmd constructor.
//
// Commands whose flag handling is worth testing apart from their work (flags
// that combine and are checked before any work, or work that is slow or
// needs a cluster: phase render, armada convert, cluster local up, and the
// armada-operator command) keep their flags in an Options struct and take a
// run function that tests replace; those tests check the command line alone.
// No other command takes one: they are tested end to end in-process, through
// root.Main against the example site or a site a test writes, and against
// real control planes where they reach a cluster.
package cli
