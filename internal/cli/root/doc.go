// Package root assembles the airshipctl command tree and runs it.
package root
