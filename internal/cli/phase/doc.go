// Package phase implements `airshipctl phase`: list, tree, render and validate.
package phase
