package emulator

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/pki"
)

// The identity the emulator gives itself in a cluster whose CA a host's
// user-data carries: system:masters is the group the API server treats as
// cluster admin whatever its RBAC.
const (
	clusterUser  = "airship:redfish-emulator"
	clusterGroup = "system:masters"
)

// maxClusterAnswerBytes caps an answer of a user-data cluster's API server
// (discovery, a Node).
const maxClusterAnswerBytes = 16 << 20

// clusterSet holds, by API server URL, the cluster CAs that hosts'
// user-data carried, and the client the emulator makes for each: a client
// certificate issued by that CA, trusting that CA for the server. A host
// whose user-data names the URL but carries no CA (a worker, with only a
// bootstrap token) joins through them.
type clusterSet struct {
	mu    sync.Mutex
	byURL map[string]*clusterCreds
}

type clusterCreds struct {
	ca *pki.KeyPair
	c  client.Client // built on first use, then kept
}

func newClusterSet() *clusterSet {
	return &clusterSet{byURL: map[string]*clusterCreds{}}
}

// remember records a cluster's CA for its API server URL. It reports
// whether that changed anything: a CA other than the one known (the
// cluster was created again) replaces it, and its client.
func (cs *clusterSet) remember(url string, ca *pki.KeyPair) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if have, ok := cs.byURL[url]; ok && bytes.Equal(have.ca.Cert.Raw, ca.Cert.Raw) {
		return false
	}
	cs.byURL[url] = &clusterCreds{ca: ca}
	return true
}

// has reports whether there are credentials for the URL.
func (cs *clusterSet) has(url string) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.byURL[url] != nil
}

// client returns the client for the URL, building it the first time.
func (cs *clusterSet) client(url string) (client.Client, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	e := cs.byURL[url]
	if e == nil {
		return nil, fmt.Errorf("no credentials for %s", url)
	}
	if e.c != nil {
		return e.c, nil
	}
	cert, err := e.ca.Issue(pki.Request{CommonName: clusterUser, Organizations: []string{clusterGroup}, Client: true})
	if err != nil {
		return nil, fmt.Errorf("issuing a client certificate for %s: %w", url, err)
	}
	keyPEM, err := cert.KeyPEM()
	if err != nil {
		return nil, fmt.Errorf("encoding the client key for %s: %w", url, err)
	}
	cfg := &rest.Config{
		Host:      url,
		UserAgent: "redfish-emulator",
		QPS:       50,
		Burst:     100,
		Timeout:   30 * time.Second,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   e.ca.CertPEM(),
			CertData: cert.CertPEM(),
			KeyData:  keyPEM,
		},
		// The URL comes from user-data: its answers are capped.
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return httplimit.LimitResponses(rt, maxClusterAnswerBytes)
		},
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("client of %s: %w", url, err)
	}
	e.c = c
	return c, nil
}
