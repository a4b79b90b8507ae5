package local

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/pki"
)

// Users the components authenticate as. The controller-manager and scheduler
// names are the ones Kubernetes' bootstrap RBAC grants their permissions to.
const (
	adminUser             = "airship-admin"
	controllerManagerUser = "system:kube-controller-manager"
	schedulerUser         = "system:kube-scheduler"
	kwokUser              = "airship:kwok"
)

// serviceClusterIPRange is the Service CIDR; its first address is the
// kubernetes Service and goes into the apiserver certificate.
const (
	serviceClusterIPRange = "10.96.0.0/16"
	firstServiceIP        = "10.96.0.1"
	podCIDR               = "10.244.0.0/16"
)

// leaf certificates: file base name → request. CA names are the issuers.
type leaf struct {
	base string
	ca   string
	req  pki.Request
}

var cas = []string{"ca", "etcd-ca", "front-proxy-ca"}

var leaves = []leaf{
	{"apiserver", "ca", pki.Request{CommonName: APIServer, Server: true, Hosts: []string{
		"127.0.0.1", "localhost", nodeGateway, firstServiceIP, "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
	}}},
	{"components-serving", "ca", pki.Request{CommonName: "local-components", Server: true, Hosts: []string{"127.0.0.1", "localhost"}}},
	{"admin", "ca", pki.Request{CommonName: adminUser, Organizations: []string{"system:masters"}, Client: true}},
	{"controller-manager", "ca", pki.Request{CommonName: controllerManagerUser, Client: true}},
	{"scheduler", "ca", pki.Request{CommonName: schedulerUser, Client: true}},
	{"kwok", "ca", pki.Request{CommonName: kwokUser, Client: true}},
	{"etcd-server", "etcd-ca", pki.Request{CommonName: "etcd", Server: true, Client: true, Hosts: []string{"127.0.0.1", "localhost"}}},
	{"apiserver-etcd-client", "etcd-ca", pki.Request{CommonName: "kube-apiserver-etcd-client", Client: true}},
	// The API server's identity towards kubelets (logs, exec).
	{"apiserver-kubelet-client", "ca", pki.Request{CommonName: kubeletClientUser, Client: true}},
	{"front-proxy-client", "front-proxy-ca", pki.Request{CommonName: "front-proxy-client", Client: true}},
}

// renewBefore is how close to expiry a certificate may get before it is reissued.
const renewBefore = 24 * time.Hour

// ensurePKI reuses the PKI in dir when it is complete and not about to
// expire, so kubeconfigs stay valid across down/up; otherwise it issues a
// new one. A clusterCA, when given, is the cluster CA (ca.crt) instead of
// a new one, and a PKI signed by another is issued anew.
func ensurePKI(dir string, clusterCA *pki.KeyPair) (reused bool, err error) {
	if pkiUsable(dir, clusterCA) {
		return true, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("creating %s: %w", dir, err)
	}
	issued := map[string]*pki.KeyPair{}
	for _, name := range cas {
		ca := clusterCA
		if name != "ca" || ca == nil {
			if ca, err = pki.NewCA("airship-local-"+name, 10*365*24*time.Hour, pki.ECDSAP256); err != nil {
				return false, err
			}
		}
		if err := ca.WriteFiles(dir, name); err != nil {
			return false, err
		}
		issued[name] = ca
	}
	for _, l := range leaves {
		kp, err := issued[l.ca].Issue(l.req)
		if err != nil {
			return false, err
		}
		if err := kp.WriteFiles(dir, l.base); err != nil {
			return false, err
		}
	}
	key, err := pki.NewKey(pki.RSA2048)
	if err != nil {
		return false, fmt.Errorf("generating service-account key: %w", err)
	}
	keyPEM, err := pki.KeyPEM(key)
	if err != nil {
		return false, err
	}
	pubPEM, err := pki.PublicKeyPEM(key.Public())
	if err != nil {
		return false, err
	}
	if err := fileutil.WriteAtomic(filepath.Join(dir, "sa.key"), keyPEM, 0o600); err != nil {
		return false, err
	}
	return false, fileutil.WriteAtomic(filepath.Join(dir, "sa.pub"), pubPEM, 0o644)
}

func pkiUsable(dir string, clusterCA *pki.KeyPair) bool {
	deadline := time.Now().Add(renewBefore)
	for _, name := range cas {
		kp, err := pki.Load(dir, name)
		if err != nil || kp.Cert.NotAfter.Before(deadline) {
			return false
		}
		if name == "ca" && clusterCA != nil && !bytes.Equal(kp.Cert.Raw, clusterCA.Cert.Raw) {
			return false
		}
	}
	for _, l := range leaves {
		kp, err := pki.Load(dir, l.base)
		if err != nil || kp.Cert.NotAfter.Before(deadline) || !coversHosts(kp.Cert, l.req.Hosts) {
			return false
		}
	}
	for _, f := range []string{"sa.key", "sa.pub"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}

// coversHosts reports whether a certificate names every host (an earlier
// version of the PKI may lack one added since).
func coversHosts(c *x509.Certificate, hosts []string) bool {
	for _, h := range hosts {
		if c.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// writeKubeconfig writes a kubeconfig (mode 0600) for a client certificate in the PKI.
func writeKubeconfig(path, server, pkiDir, certBase, contextName string) error {
	caPEM, err := os.ReadFile(filepath.Join(pkiDir, "ca.crt"))
	if err != nil {
		return fmt.Errorf("reading cluster CA: %w", err)
	}
	kp, err := pki.Load(pkiDir, certBase)
	if err != nil {
		return fmt.Errorf("loading %s certificate: %w", certBase, err)
	}
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM(), ClientKeyData: keyPEM}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	cfg.CurrentContext = contextName
	return kubeconfig.Write(path, cfg)
}

// tlsConfig returns a client TLS config that trusts caBase and presents certBase.
func tlsConfig(pkiDir, caBase, certBase string) (*tls.Config, error) {
	caPEM, err := os.ReadFile(filepath.Join(pkiDir, caBase+".crt"))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", caBase, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in %s.crt", caBase)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(pkiDir, certBase+".crt"), filepath.Join(pkiDir, certBase+".key"))
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", certBase, err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// LoadCA reads a cluster CA (certificate and key, PEM) for Options.CA and
// checks it can sign the cluster's certificates long enough.
func LoadCA(certFile, keyFile string) (*pki.KeyPair, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("reading the CA certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("reading the CA key: %w", err)
	}
	ca, err := pki.Parse(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CA %s with key %s: %w", certFile, keyFile, err)
	}
	if !ca.Cert.IsCA {
		return nil, fmt.Errorf("%s is not a CA certificate (basicConstraints CA is false)", certFile)
	}
	if ca.Cert.NotAfter.Before(time.Now().Add(renewBefore)) {
		return nil, fmt.Errorf("CA %s expires at %s", certFile, ca.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return ca, nil
}
