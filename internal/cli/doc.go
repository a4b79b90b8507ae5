// Package cli holds what every airshipctl command shares: IO streams and the
// mapping of errors to exit codes. Each noun has its own package below it
// (cluster/local, ...) with a NewCmd constructor, an Options struct that
// carries flags and dependencies, and a run function tests can replace.
package cli
