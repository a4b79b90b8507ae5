// Package process runs programs in the background for this project's local
// services (the Kubernetes control plane of internal/cluster/local, the Ironic
// of internal/localironic): each starts in its own process group, so it
// outlives the command that started it, with its output appended to a log file.
//
// A Record names a started process by its PID and the kernel's start time of
// that PID (field 22 of /proc/<pid>/stat). Alive and Stop check both, so a PID
// reused by another program is never reported as ours nor signalled. Stop sends
// SIGTERM, waits a grace period, then sends SIGKILL.
//
// The package reads /proc and is for Linux.
package process
