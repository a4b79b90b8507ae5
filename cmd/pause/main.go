package main

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	// SIGINT is asked for last and apart: a parent that started pause with
	// SIGINT ignored sees it caught (in /proc/PID/status) only once the
	// other signals are asked for too, which the tests use as the sign
	// that pause is ready.
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGCHLD)
	signal.Notify(sigs, syscall.SIGINT)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap waits for every child that has exited: signals of the same kind
// coalesce, so one SIGCHLD may stand for many.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return // ECHILD: no children; 0: none has exited yet
		}
	}
}
