// Package config reads and writes the airshipctl configuration file
// (~/.airship/config, or --airshipconf, or $AIRSHIPCONFIG) and applies the
// path rules that locate a site's documents:
//
//	metadata.yaml   = targetPath / <phase repository dir> / metadataPath
//	phase bundle    = targetPath / <phase repository dir> / metadata.phase.path
//	executor bundle = targetPath / <phase repository dir> / metadata.phase.docEntryPointPrefix / documentEntryPoint
//
// where <phase repository dir> is the last element of the phase
// repository's URL without ".git" (the directory a clone creates). A
// relative targetPath is taken from the directory of the config file, and a
// leading ~ is the home directory. Load makes the config's own path
// absolute, so these paths are absolute however --airshipconf was given
// (a toolbox script runs in another working directory).
//
// Parse is the strict decoder Load uses (fuzzed by FuzzParse). Messages
// quote a repository URL through redact.URL, never with its password.
package config
