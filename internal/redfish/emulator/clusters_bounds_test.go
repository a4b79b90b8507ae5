package emulator

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/pki"
)

// TestUserDataClusterAnswersCapped: the API server a host's user-data
// names (with its CA) answering an endless body fails the request with the
// cap, instead of filling the emulator's memory.
func TestUserDataClusterAnswersCapped(t *testing.T) {
	ca, err := pki.NewCA("kubernetes", time.Hour, pki.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.Issue(pki.Request{CommonName: "kube-apiserver", Hosts: []string{"127.0.0.1"}, Server: true})
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := serving.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(serving.CertPEM(), keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind": "APIVersions", "x": "`))
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 400 << 20 / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	cs := newClusterSet()
	cs.remember(srv.URL, ca)
	c, err := cs.client(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety net only
	defer cancel()
	err = c.Get(ctx, client.ObjectKey{Name: "host-0000"}, &corev1.Node{})
	var tl *httplimit.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != maxClusterAnswerBytes {
		t.Fatalf("Get: %v, want the answer cap of %d bytes", err, maxClusterAnswerBytes)
	}
}
