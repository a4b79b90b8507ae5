package metal3test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1beta1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	infrav1beta2 "github.com/airshipit/airship-go/api/infrastructure/v1beta2"
	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// conversionWait bounds the waits for the CRDs: the webhook sets a CRD
// installed before it within a second of starting.
const conversionWait = time.Minute

// ServeConversion serves the infrastructure kinds' conversion webhook to
// env's API server until the test ends (at a URL on the loopback, its
// certificate made in memory) and waits until every CRD of
// infrav1beta2.CRDNames converts through it. The CRDs must be installed.
func ServeConversion(t testing.TB, env *testenv.Env) {
	t.Helper()
	stop, err := StartConversion(env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
}

// StartConversion is ServeConversion for a TestMain: the webhook runs
// until stop is called.
func StartConversion(env *testenv.Env) (stop func(), err error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{infrav1beta1.AddToScheme, infrav1beta2.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		return nil, err
	}
	addr, err := testenv.PickFreeAddr(context.Background())
	if err != nil {
		return nil, err
	}
	w := operatorkit.ConversionWebhook{Addr: addr, URL: "https://" + addr, CRDs: infrav1beta2.CRDNames}
	if err := w.AddToManager(mgr, scheme, logr.Discard()); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			return // a stopped manager's: nothing left to report it to
		}
	}
	wctx, wcancel := context.WithTimeout(ctx, conversionWait)
	defer wcancel()
	if err := waitConversion(wctx, env.Client, w.URL); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// WaitConversion waits until every CRD of infrav1beta2.CRDNames converts
// through the webhook at url (as metal3-operator's --conversion-webhook-url
// gives it), and fails the test after a minute.
func WaitConversion(t testing.TB, c client.Reader, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), conversionWait)
	defer cancel()
	if err := waitConversion(ctx, c, url); err != nil {
		t.Fatal(err)
	}
}

func waitConversion(ctx context.Context, c client.Reader, url string) error {
	for {
		pending, err := operatorkit.ConversionPending(ctx, c, infrav1beta2.CRDNames, url)
		switch {
		case err != nil:
			return err
		case pending == "":
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s does not convert through the webhook at %s: %w", pending, url, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
