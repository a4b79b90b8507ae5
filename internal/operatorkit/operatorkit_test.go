package operatorkit

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/httplimit/httplimittest"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestManagerServers runs a manager against a real API server: its metrics
// and probe servers answer as controller-runtime's did (/metrics,
// /healthz, /readyz and /readyz/caches), and close a connection that sends
// nothing, half a header or nothing after a request (controller-runtime's
// have no read, write or idle-after-request bound to set).
func TestManagerServers(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	o := Defaults()
	o.LeaderElection = false
	o.SkipControllerNameValidation = true
	o.MetricsAddr, o.ProbeAddr = testenv.FreeAddr(t), testenv.FreeAddr(t)
	o.ServerTimeouts = httplimit.ServerTimeouts{ReadHeader: 200 * time.Millisecond, Read: 400 * time.Millisecond, Idle: 200 * time.Millisecond}
	mgr, err := NewManager(env.Config, scheme, o, "operatorkit-test", logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})

	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tt := range []struct{ url, body string }{
		{"http://" + o.ProbeAddr + "/healthz", "ok"},
		{"http://" + o.ProbeAddr + "/readyz", "ok"},
		{"http://" + o.ProbeAddr + "/readyz/caches", "ok"},
		{"http://" + o.MetricsAddr + "/metrics", "rest_client_requests_total"},
	} {
		if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			code, body := get(tt.url)
			return code == http.StatusOK && strings.Contains(body, tt.body), nil
		}); err != nil {
			t.Fatalf("%s never answered 200 with %q: %v", tt.url, tt.body, err)
		}
	}

	for _, addr := range []string{o.ProbeAddr, o.MetricsAddr} {
		for _, tt := range []struct{ name, send string }{
			{"nothing sent", ""},
			{"half a header", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "},
			{"idle after a request", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
		} {
			t.Run(addr+"/"+tt.name, func(t *testing.T) {
				httplimittest.ExpectClosed(t, addr, tt.send)
			})
		}
	}
}
