// Package sitecmd is what commands that read a site share: the
// --airshipconf flag, loading the config, and building the phase bundle
// with the render cache and the built-in KRM functions.
package sitecmd
