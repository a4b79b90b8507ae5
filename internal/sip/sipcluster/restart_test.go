package sipcluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/sip/sipcluster"
	"github.com/airshipit/airship-go/internal/sip/sipoperator"
)

// dyingClient lets the first `after` host label patches through, then
// stops its operator (kill) and fails every later one: an operator that
// dies part-way through labelling.
type dyingClient struct {
	client.Client
	after int
	kill  func()

	mu      sync.Mutex
	patched int
	// landed is closed once the first `after` patches have returned, so
	// the kill does not cancel them in flight.
	landed   chan struct{}
	finished int
}

func (c *dyingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if _, ok := obj.(*metal3v1alpha1.BareMetalHost); !ok {
		return c.Client.Patch(ctx, obj, patch, opts...)
	}
	c.mu.Lock()
	c.patched++
	n := c.patched
	c.mu.Unlock()
	if n > c.after {
		<-c.landed
		c.kill()
		return errors.New("operator killed")
	}
	err := c.Client.Patch(ctx, obj, patch, opts...)
	c.mu.Lock()
	c.finished++
	if c.finished == c.after {
		close(c.landed)
	}
	c.mu.Unlock()
	return err
}

// TestKilledMidLabellingThenRestarted: an operator stopped after 5 of its
// 23 label patches leaves 5 hosts labelled; a new operator finishes the
// same plan, and no host is left half-labelled.
func TestKilledMidLabellingThenRestarted(t *testing.T) {
	s := newSite(t, "sip-kill")
	for i := range 3 {
		s.host(fmt.Sprintf("cp-%d", i), "cp", fmt.Sprintf("r%d", i), fmt.Sprintf("127.0.7.%d", i+1))
	}
	for i := range 20 {
		s.host(fmt.Sprintf("w-%02d", i), "w", "r0", fmt.Sprintf("127.0.8.%d", i+1))
	}

	scheme, err := sipoperator.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx, kill := context.WithCancel(context.Background())
	defer kill()
	skip := true
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logr.Discard(),
		Controller: config.Controller{SkipNameValidation: &skip}})
	if err != nil {
		t.Fatal(err)
	}
	dying := &dyingClient{Client: mgr.GetClient(), after: 5, kill: kill, landed: make(chan struct{})}
	r := &sipcluster.SIPClusterReconciler{Client: dying, APIReader: mgr.GetAPIReader()}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()

	s.cluster("tenant", 3, 0, 20, nil)
	if err := <-done; err != nil {
		t.Fatalf("first operator: %v", err)
	}
	// Dead part-way: exactly the patches it got through, each complete.
	half := s.labelled("tenant")
	if len(half) != 5 {
		t.Fatalf("after the kill %d hosts labelled (%v), want the 5 patches that went through", len(half), half)
	}

	startOperator(t)
	s.waitReady("tenant", sipv1.ReasonTypeReconciliationSucceeded)
	want := []string{"cp-0=ControlPlane", "cp-1=ControlPlane", "cp-2=ControlPlane"}
	for i := range 20 {
		want = append(want, fmt.Sprintf("w-%02d=Worker", i))
	}
	s.waitLabels("tenant", want...)
}
