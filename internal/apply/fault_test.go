package apply

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/cluster/local"
)

// TestAPIServerRestartMidRun kills kube-apiserver while a large apply is in
// flight, brings the control plane back, and runs the same apply again: it
// finishes the job with every object present once, owned by the inventory,
// and recorded in it.
func TestAPIServerRestartMidRun(t *testing.T) {
	ctx := context.Background()
	const n = 1500
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: fault}\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: fault}\ndata: {k: v%d}\n", i, i)
	}
	objects := objs(t, b.String())

	a := newApplier(t)
	done := make(chan error, 1)
	go func() {
		_, err := a.Apply(ctx, objects, Options{Inventory: "fault", Concurrency: 4})
		done <- err
	}()

	// Wait until the apply is part-way, then kill the API server.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var list corev1.ConfigMapList
		if err := env.Client.List(ctx, &list, client.InNamespace("fault")); err == nil && len(list.Items) > 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("apply never got going")
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, err := local.GetStatus(ctx, env.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Components {
		if c.Name == local.APIServer {
			if err := syscall.Kill(c.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := <-done; err == nil {
		t.Fatal("the apply finished before the API server went down; make it larger")
	} else {
		t.Logf("interrupted apply: %.200s", err)
	}

	// Bring the control plane back on the same data, certificates and ports.
	if _, err := local.Up(ctx, local.Options{StateDir: env.StateDir, Nodes: 2, Timeout: 3 * time.Minute}); err != nil {
		t.Fatalf("restarting the control plane: %v", err)
	}

	res, err := newApplier(t).Apply(ctx, objects, Options{Inventory: "fault", Concurrency: 8})
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	if got := res.Count("created") + res.Count("unchanged") + res.Count("configured"); got != n+1 {
		t.Errorf("second run accounted for %d objects, want %d", got, n+1)
	}
	var list corev1.ConfigMapList
	if err := env.Client.List(ctx, &list, client.InNamespace("fault")); err != nil {
		t.Fatal(err)
	}
	owned := 0
	for _, cm := range list.Items {
		if cm.Labels[OwnerGroup+"/name"] == "fault" {
			owned++
		}
	}
	// kube-root-ca.crt is the controller-manager's, not ours.
	if owned != n {
		t.Errorf("%d ConfigMaps owned by the inventory, want %d (of %d listed)", owned, n, len(list.Items))
	}
	inv, _, err := ReadInventory(ctx, env.Client, "fault")
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Objects) != n+1 {
		t.Errorf("inventory holds %d objects, want %d", len(inv.Objects), n+1)
	}
}
