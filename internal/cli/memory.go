package cli

import (
	"os"
	"runtime/debug"
)

// SoftMemoryLimit sets the Go runtime's soft memory limit of this process
// to limit bytes, unless $GOMEMLIMIT sets one (the user's word wins). Below
// the limit the collector runs as it always does; near it, it collects
// before the heap doubles, trading CPU for memory. Soft: a heap that needs
// more grows past it, and the runtime gives the collector at most half
// the CPU.
func SoftMemoryLimit(limit int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}
