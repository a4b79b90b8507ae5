// Command podprobe runs in a pod on a real node of the local control plane
// (TestRealNode): it asks the API server, through the kubernetes Service
// and with its ServiceAccount token, who it is, prints the answer's user
// name and whether its root file system is writable, and exits 0; any
// failure exits 1 with the reason.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

const sa = "/var/run/secrets/kubernetes.io/serviceaccount/"

func main() {
	user, err := whoAmI()
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("user:", user)
	// The pod asks for a read-only root file system; the runtime must enforce it.
	if err := os.WriteFile("/probe-was-here", []byte("x"), 0o600); err == nil {
		fmt.Println("rootfs: writable")
	} else {
		fmt.Println("rootfs: read-only")
	}
}

func whoAmI() (string, error) {
	token, err := os.ReadFile(sa + "token")
	if err != nil {
		return "", err
	}
	caPEM, err := os.ReadFile(sa + "ca.crt")
	if err != nil {
		return "", err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return "", fmt.Errorf("no certificate in %sca.crt", sa)
	}
	host := net.JoinHostPort(os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"))
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	body := []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
	req, err := http.NewRequest(http.MethodPost, "https://"+host+"/apis/authentication.k8s.io/v1/selfsubjectreviews", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+string(bytes.TrimSpace(token)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s answered %d: %s", host, resp.StatusCode, data)
	}
	var r struct {
		Status struct {
			UserInfo struct {
				Username string `json:"username"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}
