// Package documentcmd implements `airshipctl document`: pull, which clones or
// updates the current manifest's repositories into its target path
// (through internal/repository).
package documentcmd
