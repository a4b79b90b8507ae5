package local

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/airshipit/airship-go/internal/process"
)

// health probes component endpoints over TLS with the cluster's own
// certificates: etcd with the apiserver's etcd client certificate, the rest
// with the admin certificate.
type health struct {
	etcd, cluster, plain *http.Client
}

func newHealth(p paths) (*health, error) {
	etcdTLS, err := tlsConfig(p.pki(), "etcd-ca", "apiserver-etcd-client")
	if err != nil {
		return nil, err
	}
	clusterTLS, err := tlsConfig(p.pki(), "ca", "admin")
	if err != nil {
		return nil, err
	}
	mk := func(t *http.Transport) *http.Client { return &http.Client{Timeout: 3 * time.Second, Transport: t} }
	return &health{
		etcd:    mk(&http.Transport{TLSClientConfig: etcdTLS, DisableKeepAlives: true}),
		cluster: mk(&http.Transport{TLSClientConfig: clusterTLS, DisableKeepAlives: true}),
		plain:   mk(&http.Transport{DisableKeepAlives: true}),
	}, nil
}

// probe returns nil when the component's health endpoint answers ok.
func (h *health) probe(ctx context.Context, component, url string) error {
	if url == "" {
		return fmt.Errorf("no health endpoint recorded")
	}
	if sock, ok := strings.CutPrefix(url, "unix://"); ok {
		// containerd: healthy when its socket accepts a connection.
		var d net.Dialer
		conn, err := d.DialContext(ctx, "unix", sock)
		if err != nil {
			return err
		}
		return conn.Close()
	}
	c := h.cluster
	switch {
	case component == Etcd:
		c = h.etcd
	case strings.HasPrefix(url, "http://"):
		// kwok's, the kubelet's and kube-proxy's health endpoints are plain
		// HTTP on loopback and carry no credentials.
		c = h.plain
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }() // only read: closing cannot lose data
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d: %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if component == Etcd {
		var v struct {
			Health string `json:"health"`
		}
		if err := json.Unmarshal(body, &v); err != nil || v.Health != "true" {
			return fmt.Errorf("%s reports unhealthy: %s", url, strings.TrimSpace(string(body)))
		}
	}
	return nil
}

// waitHealthy polls until the process is healthy, exits, or ctx ends.
func (h *health) waitHealthy(ctx context.Context, s *process.Started) error {
	var last error
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if last = h.probe(ctx, s.Record.Component, s.Record.HealthURL); last == nil {
			return nil
		}
		select {
		case <-s.Exited():
			return fmt.Errorf("process %d exited", s.Record.PID)
		case <-ctx.Done():
			return fmt.Errorf("timed out (last check: %w)", last)
		case <-tick.C:
		}
	}
}
