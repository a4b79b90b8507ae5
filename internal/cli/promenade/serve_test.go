package promenade

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/pki"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// syncBuffer is a goroutine-safe buffer for the server's output.
type syncBuffer struct {
	ch chan string
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.ch <- string(p)
	return len(p), nil
}

// TestServeOverTLSWithToken runs `promenade serve` on a real listening
// socket on 127.0.0.1 with TLS and a bearer token, and fetches a join script.
func TestServeOverTLSWithToken(t *testing.T) {
	dir := t.TempDir()
	design := filepath.Join(dir, "design")
	if _, errOut, code := run(t, append([]string{"generate-certs", "--output-dir", design}, exampleFiles(t)...)...); code != 0 {
		t.Fatal(errOut)
	}
	for _, f := range exampleFiles(t) {
		b, _ := os.ReadFile(f)
		if err := os.WriteFile(filepath.Join(design, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ca, err := pki.NewCA("promenade-api-ca", time.Hour, pki.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	srvCert, err := ca.Issue(pki.Request{CommonName: "promenade-api", Hosts: []string{"127.0.0.1", "localhost"}, Server: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := srvCert.WriteFiles(dir, "api"); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Find a free port, then let the command listen on it.
	ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() //nolint:errcheck

	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{ch: make(chan string, 10)}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--listen", addr, "--tls-cert", filepath.Join(dir, "api.crt"),
			"--tls-key", filepath.Join(dir, "api.key"), "--token-file", tokenFile, "--design-root", dir},
			cli.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: out})
	}()
	select {
	case line := <-out.ch:
		if !strings.Contains(line, "https://"+addr) || !strings.Contains(line, "token required: true") {
			t.Fatalf("startup line %q", line)
		}
	case code := <-done:
		t.Fatalf("serve exited with %d", code)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}

	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	base := "https://" + addr + "/api/v1.0"
	do := func(method, path, token string, body io.Reader) (*http.Response, []byte) {
		req, err := http.NewRequestWithContext(t.Context(), method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }() // only read: closing cannot lose data
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	if resp, _ := do("GET", "/health", "", nil); resp.StatusCode != http.StatusNoContent {
		t.Errorf("health %d", resp.StatusCode)
	}
	q := url.Values{"hostname": {"n8"}, "ip": {"192.168.77.18"}, "design_ref": {design}, "labels.dynamic": {"role=worker"}}
	if resp, _ := do("GET", "/join-scripts?"+q.Encode(), "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without token: %d", resp.StatusCode)
	}
	resp, body := do("GET", "/join-scripts?"+q.Encode(), "t0ken", nil)
	if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(body, []byte("#!/usr/bin/env bash")) || !bytes.Contains(body, []byte("NODE_NAME=n8")) {
		t.Fatalf("join script: %d %.200s", resp.StatusCode, body)
	}
	q.Set("ip", "nope")
	resp, body = do("GET", "/join-scripts?"+q.Encode(), "t0ken", nil)
	var st struct{ Parameter string }
	if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != 400 || st.Parameter != "ip" {
		t.Errorf("bad ip: %d %s", resp.StatusCode, body)
	}
	resp, body = do("POST", "/validatedesign", "t0ken", strings.NewReader(fmt.Sprintf(`{"href": %q}`, design)))
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"status":"Success"`)) {
		t.Errorf("validatedesign: %d %s", resp.StatusCode, body)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited with %d after shutdown", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down")
	}
}

// TestServeRefusesUnsafeExposure checks that serve refuses to start where
// it would hand out the site's keys to whoever reaches the address.
func TestServeRefusesUnsafeExposure(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		errHas string
	}{
		{"no token on loopback", []string{"--listen", "127.0.0.1:0"}, "--token-file"},
		{"no token on all interfaces", []string{"--listen", ":0"}, "--token-file"},
		{"no auth beyond loopback", []string{"--listen", "0.0.0.0:0", "--insecure-no-auth"}, "loopback address only"},
		{"no auth and a token", []string{"--listen", "127.0.0.1:0", "--insecure-no-auth", "--token-file", tokenFile}, "contradict"},
		{"plain HTTP beyond loopback", []string{"--listen", "0.0.0.0:0", "--token-file", tokenFile}, "--tls-cert"},
		{"empty token file", []string{"--listen", "127.0.0.1:0", "--token-file", empty}, "is empty"},
		{"missing design root", []string{"--listen", "127.0.0.1:0", "--token-file", tokenFile, "--design-root", filepath.Join(dir, "nope")}, "design root"},
		{"missing kubeconfig", []string{"--listen", "127.0.0.1:0", "--token-file", tokenFile, "--kubeconfig", filepath.Join(dir, "nope")}, "--kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(TokenEnv, "")
			_, errOut, code := run(t, append([]string{"serve"}, tt.args...)...)
			if code == 0 || !strings.Contains(errOut, tt.errHas) {
				t.Errorf("exit %d, stderr %q; want a refusal naming %q", code, errOut, tt.errHas)
			}
		})
	}
}

// TestServeLoopbackWithoutAuth starts with the explicit --insecure-no-auth
// on loopback and answers without a token.
func TestServeLoopbackWithoutAuth(t *testing.T) {
	ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() //nolint:errcheck
	t.Setenv(TokenEnv, "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a cluster: node labels are off
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{ch: make(chan string, 10)}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--listen", addr, "--insecure-no-auth", "--design-root", t.TempDir()},
			cli.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: out})
	}()
	select {
	case line := <-out.ch:
		if !strings.Contains(line, "token required: false") || !strings.Contains(line, "node labels: off") {
			t.Fatalf("startup line %q", line)
		}
	case code := <-done:
		t.Fatalf("serve exited with %d", code)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/api/v1.0/join-scripts?hostname=n1&ip=10.0.0.1&design_ref=nope", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := testenv.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close() // only read: closing cannot lose data
	// Past auth: the request fails on its design_ref, not with 401.
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d, want 400 for the missing design", resp.StatusCode)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}
