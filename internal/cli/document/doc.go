// Package document implements `airshipctl document`: pull, which clones or
// updates the current manifest's repositories into its target path.
package document
