package operatorkit

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/redact"
)

// InClusterNamespaceFile is where a pod finds its namespace.
var InClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ConversionPath is where the conversion webhook answers.
const ConversionPath = "/convert"

// MaxConversionReviewBytes bounds a ConversionReview's body: the API server
// sends the objects of one list in one review.
const MaxConversionReviewBytes = 64 << 20

// DefaultConversionSyncInterval is how often the webhook's certificate is
// read again and the CRDs' spec.conversion checked.
const DefaultConversionSyncInterval = 10 * time.Second

// ConversionWebhook serves the API server's ConversionReviews for CRDs of
// more than one version (POST /convert over TLS), converting through each
// kind's hub (controller-runtime's conversion.Hub and Convertible, on the
// operator's scheme), and keeps those CRDs' spec.conversion pointing at
// it: strategy Webhook, its URL or Service, the CA that signed its
// certificate.
type ConversionWebhook struct {
	// Addr is where it listens; "" or "0" disables it.
	Addr string
	// URL is what the API server calls when the operator runs outside the
	// cluster (https://host:port; the path is ConversionPath).
	URL string
	// Service is namespace/name of the Service in front of the operator's
	// pods, port 443; one of URL and Service is set. A name alone is in
	// the operator's namespace (its pod's).
	Service string
	// CertDir holds tls.crt, tls.key and ca.crt (a mounted Secret, as
	// cert-manager writes it), read again as they change. Empty: the
	// certificate is the operator's own, kept in CertSecret.
	CertDir string
	// CertSecret is namespace/name (or a name in the operator's
	// namespace) of the Secret (kubernetes.io/tls, with ca.crt) the first
	// replica writes a CA and serving certificate to and the others read;
	// empty with no CertDir: made in memory at start, for one process only
	// (a local process, a test).
	CertSecret string
	// CRDs are the names of the CRDs whose conversion it serves.
	CRDs []string
	// SyncInterval is DefaultConversionSyncInterval when zero.
	SyncInterval time.Duration
}

// BindFlags registers the webhook's flags on fs.
func (w *ConversionWebhook) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&w.Addr, "conversion-webhook-bind-address", w.Addr, `address of the CRD conversion webhook (TLS); "0" disables it`)
	fs.StringVar(&w.URL, "conversion-webhook-url", w.URL, "https://host:port the API server calls for conversions (an operator outside the cluster)")
	fs.StringVar(&w.Service, "conversion-webhook-service", w.Service, "namespace/name of the Service in front of the operator, port 443, that the API server calls for conversions")
	fs.StringVar(&w.CertDir, "conversion-webhook-cert-dir", w.CertDir, "directory with the webhook's tls.crt, tls.key and ca.crt (default: its own, in --conversion-webhook-cert-secret)")
	fs.StringVar(&w.CertSecret, "conversion-webhook-cert-secret", w.CertSecret, "namespace/name of the Secret holding the webhook's own CA and certificate, shared by the replicas")
}

// Enabled says whether the webhook is served.
func (w ConversionWebhook) Enabled() bool { return enabled(w.Addr) }

// Validate reports settings that cannot work.
func (w ConversionWebhook) Validate() error {
	if !w.Enabled() {
		return nil
	}
	if (w.URL == "") == (w.Service == "") {
		return errors.New("--conversion-webhook-bind-address needs one of --conversion-webhook-url and --conversion-webhook-service")
	}
	if w.URL != "" {
		u, err := url.Parse(w.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return fmt.Errorf("--conversion-webhook-url %q: want https://host:port, without credentials, path or query", redact.URL(w.URL))
		}
	}
	for flag, v := range map[string]string{"--conversion-webhook-service": w.Service, "--conversion-webhook-cert-secret": w.CertSecret} {
		if v == "" {
			continue
		}
		if ns, name, ok := strings.Cut(v, "/"); ok && (ns == "" || name == "" || strings.Contains(name, "/")) {
			return fmt.Errorf("%s %q: want namespace/name, or a name in the operator's namespace", flag, v)
		}
	}
	if len(w.CRDs) == 0 {
		return errors.New("the conversion webhook has no CRDs to serve")
	}
	return nil
}

// hosts are the names the serving certificate is for.
func (w ConversionWebhook) hosts() []string {
	if w.URL != "" {
		u, _ := url.Parse(w.URL)
		return []string{u.Hostname()}
	}
	ns, name, _ := strings.Cut(w.Service, "/")
	return []string{name + "." + ns + ".svc", name + "." + ns + ".svc.cluster.local", name + "." + ns, name}
}

// clientConfig is the CRDs' spec.conversion.webhook.clientConfig.
func (w ConversionWebhook) clientConfig(ca []byte) *apiextensionsv1.WebhookClientConfig {
	cc := &apiextensionsv1.WebhookClientConfig{CABundle: ca}
	if w.URL != "" {
		u := strings.TrimSuffix(w.URL, "/") + ConversionPath
		cc.URL = &u
		return cc
	}
	ns, name, _ := strings.Cut(w.Service, "/")
	path, port := ConversionPath, int32(443)
	cc.Service = &apiextensionsv1.ServiceReference{Namespace: ns, Name: name, Path: &path, Port: &port}
	return cc
}

// inNamespace is w with a Service or CertSecret named without a
// namespace put in the operator's (its pod's).
func (w ConversionWebhook) inNamespace() (ConversionWebhook, error) {
	for _, ref := range []*string{&w.Service, &w.CertSecret} {
		if *ref != "" && !strings.Contains(*ref, "/") {
			ns, err := os.ReadFile(InClusterNamespaceFile)
			if err != nil {
				return w, fmt.Errorf("conversion webhook: %q names no namespace and the operator runs outside a pod: %w", *ref, err)
			}
			*ref = strings.TrimSpace(string(ns)) + "/" + *ref
		}
	}
	return w, nil
}

// AddToManager registers the webhook's server and its certificate and
// CRD keeper on mgr, a manager not built by Operator (a test's, serving
// conversions for controllers run another way), with httplimit's default
// timeouts.
func (w ConversionWebhook) AddToManager(mgr ctrl.Manager, scheme *runtime.Scheme, log logr.Logger) error {
	if err := w.Validate(); err != nil {
		return err
	}
	return w.add(mgr, mgr.GetConfig(), scheme, httplimit.ServerTimeouts{}.WithDefaults(), log)
}

// ConversionPending names a CRD of crds that does not convert through a
// webhook at url (its ConversionPath) with a CA yet, "" once all do.
func ConversionPending(ctx context.Context, c client.Reader, crds []string, url string) (string, error) {
	want := strings.TrimSuffix(url, "/") + ConversionPath
	for _, name := range crds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			if apierrors.IsNotFound(err) {
				return name + " (not installed)", nil
			}
			return "", fmt.Errorf("reading CRD %s: %w", name, err)
		}
		cv := crd.Spec.Conversion
		if cv == nil || cv.Strategy != apiextensionsv1.WebhookConverter || cv.Webhook == nil || cv.Webhook.ClientConfig == nil ||
			cv.Webhook.ClientConfig.URL == nil || *cv.Webhook.ClientConfig.URL != want || len(cv.Webhook.ClientConfig.CABundle) == 0 {
			return name, nil
		}
	}
	return "", nil
}

// add registers the webhook's server and its certificate and CRD keeper on
// mgr; both run on every replica, leader or not.
func (w ConversionWebhook) add(mgr ctrl.Manager, cfg *rest.Config, scheme *runtime.Scheme, t httplimit.ServerTimeouts, log logr.Logger) error {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			return err
		}
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("conversion webhook client: %w", err)
	}
	w, err = w.inNamespace()
	if err != nil {
		return err
	}
	k := &conversionKeeper{w: w, c: c, log: log.WithName("conversion-webhook"), kicks: make(chan struct{}, 1)}
	if w.CertDir == "" && w.CertSecret == "" {
		if err := k.selfSigned(); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", w.Addr) //nolint:noctx // bound while the manager is built; the manager's server closes it
	if err != nil {
		return fmt.Errorf("conversion webhook server: %w", err)
	}
	tlsLn := tls.NewListener(ln, &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: k.certificate})
	mux := http.NewServeMux()
	h := conversion.NewWebhookHandler(scheme, conversion.NewRegistry())
	mux.Handle("POST "+ConversionPath, http.MaxBytesHandler(h, MaxConversionReviewBytes))
	if err := mgr.Add(&manager.Server{Name: "conversion webhook", Server: httplimit.NewServer(mux, t), Listener: tlsLn}); err != nil {
		_ = ln.Close()
		return fmt.Errorf("conversion webhook server: %w", err)
	}
	return mgr.Add(k)
}

// conversionKeeper holds the webhook's certificate and keeps the CRDs'
// spec.conversion on it.
type conversionKeeper struct {
	w   ConversionWebhook
	c   client.WithWatch
	log logr.Logger
	// kicks asks for a sync now: a watched CRD changed.
	kicks chan struct{}

	cert atomic.Pointer[tls.Certificate]
	mu   sync.Mutex
	ca   []byte
	// missing are the CRDs not found since they were last seen (each logged
	// once); while any is, syncs come every second.
	missing map[string]bool
}

// NeedLeaderElection: every replica serves conversions.
func (k *conversionKeeper) NeedLeaderElection() bool { return false }

func (k *conversionKeeper) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := k.cert.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("conversion webhook: no certificate yet")
}

// Start syncs at once, whenever a CRD of w.CRDs changes (watched: one
// installed, or applied again from a manifest that says otherwise, is set
// within moments) and every SyncInterval, until ctx ends; errors are
// logged and tried again. While a CRD is missing or a sync failed it tries
// every second as well, should its watch fail.
func (k *conversionKeeper) Start(ctx context.Context) error {
	every := k.w.SyncInterval
	if every <= 0 {
		every = DefaultConversionSyncInterval
	}
	var watches sync.WaitGroup
	defer watches.Wait()
	for _, name := range k.w.CRDs {
		watches.Go(func() { k.watchCRD(ctx, name) })
	}
	for {
		next := every
		if err := k.sync(ctx); err != nil && ctx.Err() == nil {
			k.log.Error(err, "conversion webhook")
			next = min(next, time.Second)
		}
		if k.anyMissing() {
			next = min(next, time.Second)
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		case <-k.kicks:
			t.Stop()
		}
	}
}

// watchCRD asks for a sync whenever CRD name is added, changed or
// deleted, until ctx ends; a watch that ends or fails is opened again a
// second later. It watches the CRD's metadata alone, by name, which is
// what the operator's Role grants.
func (k *conversionKeeper) watchCRD(ctx context.Context, name string) {
	for ctx.Err() == nil {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinitionList"))
		w, err := k.c.Watch(ctx, list, client.MatchingFields{"metadata.name": name})
		if err != nil {
			k.log.V(1).Info("watching CRD", "crd", name, "error", err.Error())
		} else {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					break
				}
				select {
				case k.kicks <- struct{}{}:
				default: // a sync is asked for already
				}
			}
			w.Stop()
		}
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

func (k *conversionKeeper) anyMissing() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, m := range k.missing {
		if m {
			return true
		}
	}
	return false
}

// sync loads the certificate and sets every CRD's spec.conversion.
func (k *conversionKeeper) sync(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	switch {
	case k.w.CertDir != "":
		if err := k.fromDir(); err != nil {
			return err
		}
	case k.w.CertSecret != "":
		if err := k.fromSecret(ctx); err != nil {
			return err
		}
	}
	k.mu.Lock()
	ca := k.ca
	k.mu.Unlock()
	var errs []error
	for _, name := range k.w.CRDs {
		errs = append(errs, k.setConversion(ctx, name, ca))
	}
	return errors.Join(errs...)
}

func (k *conversionKeeper) setConversion(ctx context.Context, name string, ca []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k.c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			k.mu.Lock()
			if k.missing == nil {
				k.missing = map[string]bool{}
			}
			if !k.missing[name] {
				k.log.Info("CRD not installed yet: its conversion is set once it is", "crd", name)
			}
			k.missing[name] = true
			k.mu.Unlock()
			return nil
		}
		return fmt.Errorf("reading CRD %s: %w", name, err)
	}
	k.mu.Lock()
	delete(k.missing, name)
	k.mu.Unlock()
	want := &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             k.w.clientConfig(ca),
			ConversionReviewVersions: []string{"v1"},
		},
	}
	if apiequality.Semantic.DeepEqual(crd.Spec.Conversion, want) {
		return nil
	}
	crd.Spec.Conversion = want
	if err := k.c.Update(ctx, crd); err != nil {
		return fmt.Errorf("setting CRD %s's spec.conversion: %w", name, err)
	}
	k.log.Info("CRD conversion set", "crd", name, "strategy", want.Strategy)
	return nil
}

func (k *conversionKeeper) use(certPEM, keyPEM, ca []byte) error {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("conversion webhook certificate: %w", err)
	}
	k.cert.Store(&cert)
	k.mu.Lock()
	k.ca = bytes.Clone(ca)
	k.mu.Unlock()
	return nil
}

func (k *conversionKeeper) fromDir() error {
	var files [3][]byte
	for i, name := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey, "ca.crt"} {
		b, err := os.ReadFile(filepath.Join(k.w.CertDir, name))
		if err != nil {
			return fmt.Errorf("conversion webhook certificate: %w", err)
		}
		files[i] = b
	}
	return k.use(files[0], files[1], files[2])
}

// issue makes a CA and a serving certificate of the webhook's hosts.
func (k *conversionKeeper) issue() (certPEM, keyPEM, caPEM []byte, err error) {
	ca, err := pki.NewCA("conversion-webhook-ca", 0, pki.ECDSAP256)
	if err != nil {
		return nil, nil, nil, err
	}
	hosts := k.w.hosts()
	kp, err := ca.Issue(pki.Request{CommonName: hosts[0], Hosts: hosts, Server: true})
	if err != nil {
		return nil, nil, nil, err
	}
	keyPEM, err = kp.KeyPEM()
	if err != nil {
		return nil, nil, nil, err
	}
	return kp.CertPEM(), keyPEM, ca.CertPEM(), nil
}

func (k *conversionKeeper) selfSigned() error {
	certPEM, keyPEM, caPEM, err := k.issue()
	if err != nil {
		return fmt.Errorf("conversion webhook certificate: %w", err)
	}
	return k.use(certPEM, keyPEM, caPEM)
}

// fromSecret reads the shared certificate, writing a new one when there
// is none, or the one there does not serve the webhook's hosts or expires
// within a tenth of its validity.
func (k *conversionKeeper) fromSecret(ctx context.Context) error {
	ns, name, _ := strings.Cut(k.w.CertSecret, "/")
	sec := &corev1.Secret{}
	err := k.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sec)
	switch {
	case apierrors.IsNotFound(err):
		certPEM, keyPEM, caPEM, err := k.issue()
		if err != nil {
			return err
		}
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM, "ca.crt": caPEM},
		}
		if err := k.c.Create(ctx, sec); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return k.fromSecret(ctx) // another replica was first
			}
			return fmt.Errorf("writing Secret %s: %w", k.w.CertSecret, err)
		}
		k.log.Info("conversion webhook certificate written", "secret", k.w.CertSecret)
		return k.use(certPEM, keyPEM, caPEM)
	case err != nil:
		return fmt.Errorf("reading Secret %s: %w", k.w.CertSecret, err)
	}
	if k.serves(sec.Data[corev1.TLSCertKey]) {
		return k.use(sec.Data[corev1.TLSCertKey], sec.Data[corev1.TLSPrivateKeyKey], sec.Data["ca.crt"])
	}
	certPEM, keyPEM, caPEM, err := k.issue()
	if err != nil {
		return err
	}
	sec.Type = corev1.SecretTypeTLS
	sec.Data = map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM, "ca.crt": caPEM}
	// The update carries the resourceVersion read: a replica that renewed
	// in between wins, and this one reads its certificate next time.
	if err := k.c.Update(ctx, sec); err != nil {
		return fmt.Errorf("renewing Secret %s: %w", k.w.CertSecret, err)
	}
	k.log.Info("conversion webhook certificate renewed", "secret", k.w.CertSecret)
	return k.use(certPEM, keyPEM, caPEM)
}

// serves says whether certPEM is a certificate for every host of the
// webhook valid for more than a tenth of its lifetime still.
func (k *conversionKeeper) serves(certPEM []byte) bool {
	b, _ := pem.Decode(certPEM)
	if b == nil {
		return false
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return false
	}
	now := time.Now()
	if now.After(cert.NotAfter.Add(-cert.NotAfter.Sub(cert.NotBefore) / 10)) {
		return false
	}
	return !slices.ContainsFunc(k.w.hosts(), func(h string) bool { return cert.VerifyHostname(h) != nil })
}
