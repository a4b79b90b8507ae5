package promenade

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubeClientBounded: the client node-labels changes Nodes with gives
// up on an API server that never answers (KubeTimeout, shortened here): its
// own deadline ends the request, not the caller's context.
func TestKubeClientBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: `+srv.URL+`}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	saved := KubeTimeout
	t.Cleanup(func() { KubeTimeout = saved })
	KubeTimeout = 300 * time.Millisecond
	cs, _, err := kubeClient(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	var ne net.Error
	if err == nil || !(errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())) {
		t.Fatalf("Get: %v, want a timeout", err)
	}
}
