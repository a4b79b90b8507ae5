// Command pause is the sandbox (pod infrastructure) container of the
// images `make images` builds, localhost/airship/pause:latest: it holds a
// pod's namespaces open and does nothing else. It runs until SIGTERM or
// SIGINT, then exits 0; as the PID 1 of a pod that shares its process
// namespace it reaps the zombies orphaned to it, waiting for every exited
// child on each SIGCHLD. It prints nothing and takes no arguments.
//
// It is a static Go binary, so the image needs no C library; kubelet's
// own sandbox image does the same in C.
package main
