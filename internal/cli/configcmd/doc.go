// Package configcmd implements `airshipctl config`: init, get-context,
// set-context, use-context, get-manifest and set-manifest.
package configcmd
