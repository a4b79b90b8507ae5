// Package cli holds what every command of the project's six binaries
// (airshipctl, promenade, armada-operator, metal3-operator, sip-operator,
// redfish-emulator) shares: IO streams, Run (the one way a root command is
// executed: errors printed once, flag errors exit 2 with the usage), the
// mapping of errors to exit codes, the --timeout flag, and the --state-dir
// flag of the commands that run a service on this machine (cluster local,
// ironic local). Each noun has
// its own package below it (cluster/local, phasecmd, plan, ...) with a NewCmd
// constructor; the three operator binaries share one command,
// operatorcmd, and differ only in the Spec their package gives it.
//
// Commands whose flag handling is worth testing apart from their work (flags
// that combine and are checked before any work, or work that is slow or
// needs a cluster: phase render, armada convert, cluster local up, the
// secret verbs, and the operator commands) keep their flags in an Options
// struct (an operator's own options for operatorcmd) and take a run
// function that tests replace; those tests check the command line alone.
// No other command takes one: they are tested end to end in-process, through
// root.Main against the example site or a site a test writes, and against
// real control planes where they reach a cluster.
package cli
