// Package clitest checks what every command of the project's binaries must
// have: an Example whose command lines name real subcommands and flags.
package clitest
