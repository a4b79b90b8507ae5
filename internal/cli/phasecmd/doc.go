// Package phasecmd implements `airshipctl phase`: list, tree, render and validate.
package phasecmd
