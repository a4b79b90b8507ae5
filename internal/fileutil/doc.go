// Package fileutil writes files the one way the project writes them:
// atomically (a temporary file in the same directory, then a rename) with an
// explicit mode, so a reader never sees half a kubeconfig, key or state file
// and secrets never exist on disk with looser permissions than asked for.
// Within is the one test of whether a path lies in a directory.
package fileutil
