// Command capi-managers runs Cluster API's core and kubeadm managers as
// local processes against a cluster kwok plays the kubelets of, once
// `clusterctl init` has installed their providers there (see
// internal/cluster/capilocal). `make demo` starts it before the plan and
// stops it with the other local operators.
//
// Usage: capi-managers --kubeconfig FILE [--log-dir DIR] [--timeout 10m]
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/airshipit/airship-go/internal/cluster/capilocal"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "capi-managers:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", "", "admin kubeconfig of the cluster (required)")
	logDir := flag.String("log-dir", "", "directory for the managers' logs and webhook certificate (default: a new temporary directory)")
	timeout := flag.Duration("timeout", 10*time.Minute, "how long to wait for clusterctl init to install the providers")
	syncPeriod := flag.Duration("sync-period", capilocal.DefaultSyncPeriod, "the managers' --sync-period")
	flag.Parse()
	if *kubeconfig == "" || flag.NArg() > 0 {
		flag.Usage()
		return fmt.Errorf("--kubeconfig is required and no arguments are taken")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("reading %s: %w", *kubeconfig, err)
	}
	if *logDir != "" {
		if err := os.MkdirAll(*logDir, 0o700); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	want := slices.Sorted(maps.Keys(capilocal.Binaries))
	fmt.Printf("waiting for clusterctl init to install %v\n", want)
	wctx, cancel := context.WithTimeout(ctx, *timeout)
	err = capilocal.WaitForInventory(wctx, cfg, want, time.Second)
	cancel()
	if err != nil {
		return err
	}
	env, err := capilocal.New(ctx, cfg, *kubeconfig, capilocal.Options{LogDir: *logDir, SyncPeriod: *syncPeriod})
	if err != nil {
		return err
	}
	for _, m := range env.Managers {
		fmt.Printf("%s running (pid %d, log %s)\n", filepath.Base(m.Binary), m.PID(), m.Log)
	}
	fmt.Println("Cluster API managers ready")
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return env.Stop()
		case <-tick.C:
		}
		for _, m := range env.Managers {
			if !m.Running() {
				_ = env.Stop()
				return fmt.Errorf("%s exited; log %s:\n%s", filepath.Base(m.Binary), m.Log, m.Tail(20))
			}
		}
	}
}
