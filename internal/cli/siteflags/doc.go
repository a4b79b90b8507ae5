// Package siteflags holds the global flags that pick and load a site
// (--airshipconf, --kubeconfig, --no-render-cache) and what every command
// that reads a site does with them: load the config, build the phase bundle
// with the render cache and the built-in KRM functions, and complete phase,
// plan, cluster and context names in the shell.
package siteflags
