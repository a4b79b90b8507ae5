package apply

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airshipit/airship-go/internal/pki"
)

// webhookServer answers ConfigMap admission reviews on addr over TLS,
// allowing or denying them, and counts the reviews.
type webhookServer struct {
	reviews atomic.Int32
	srv     *http.Server
}

func serveWebhook(t *testing.T, l net.Listener, kp *pki.KeyPair, allow bool) *webhookServer {
	t.Helper()
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(kp.CertPEM(), keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	w := &webhookServer{}
	w.srv = &http.Server{
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			w.reviews.Add(1)
			var review admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
				http.Error(rw, "bad review", http.StatusBadRequest)
				return
			}
			review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: allow}
			if !allow {
				review.Response.Result = &metav1.Status{Message: "settings are frozen", Code: http.StatusForbidden}
			}
			review.Request = nil
			_ = json.NewEncoder(rw).Encode(&review)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = w.srv.ServeTLS(l, "", "") }()
	t.Cleanup(func() { _ = w.srv.Close() })
	return w
}

// registerWebhook points a validating webhook for ConfigMaps labelled
// webhook-test=name at url, trusting ca, until the test ends.
func registerWebhook(t *testing.T, name, url string, ca []byte) {
	t.Helper()
	ctx := context.Background()
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(5)
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    name + ".test.airshipit.org",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"webhook-test": name}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if err := env.Client.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, cfg) })
}

func webhookCert(t *testing.T) (*pki.KeyPair, *pki.KeyPair) {
	t.Helper()
	ca, err := pki.NewCA("apply-webhook-test", time.Hour, pki.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(pki.Request{CommonName: "127.0.0.1", Hosts: []string{"127.0.0.1"}, Server: true, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return ca, kp
}

// TestWebhookNotServingYet applies a ConfigMap whose validating webhook
// does not listen yet, as right after `clusterctl init`: the apply tries
// again and succeeds once the webhook's server starts, which the test does
// only after the applier reported the wait.
func TestWebhookNotServingYet(t *testing.T) {
	ctx := t.Context()
	ca, kp := webhookCert(t)
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens until the applier reports the wait
	registerWebhook(t, "late", "https://"+addr+"/validate", ca.CertPEM())

	waiting := make(chan string, 1)
	y := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late, namespace: default, labels: {webhook-test: late}}\ndata: {a: b}\n"
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := newApplier(t).Apply(ctx, objs(t, y), Options{Inventory: "webhook-late", WebhookWait: time.Minute, Progress: func(ev Event) {
			if strings.Contains(ev.Message, "admission webhook does not answer yet") {
				select {
				case waiting <- ev.Message:
				default:
				}
			}
		}})
		done <- outcome{res, err}
	}()
	var msg string
	select {
	case msg = <-waiting:
	case o := <-done:
		t.Fatalf("apply ended (%+v, %v) without waiting for the webhook", o.res, o.err)
	}
	if !strings.Contains(msg, "ConfigMap/default/late") {
		t.Errorf("wait message %q does not name the object", msg)
	}
	l, err = (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	w := serveWebhook(t, l, kp, true)
	o := <-done
	if o.err != nil {
		t.Fatalf("apply after the webhook started: %v", o.err)
	}
	if o.res.Count("created") != 1 || w.reviews.Load() == 0 {
		t.Fatalf("result %+v, %d reviews: want the ConfigMap created through the webhook", o.res, w.reviews.Load())
	}
	if !exists(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "late"}}) {
		t.Fatal("the ConfigMap is not there")
	}
}

// TestWebhookDenialIsNotRetried: a webhook that answers and refuses fails
// the apply with its message after one review, and a webhook that never
// comes up fails it after WebhookWait with the API server's error.
func TestWebhookDenialIsNotRetried(t *testing.T) {
	ctx := t.Context()
	ca, kp := webhookCert(t)
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	registerWebhook(t, "deny", "https://"+l.Addr().String()+"/validate", ca.CertPEM())
	w := serveWebhook(t, l, kp, false)
	y := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen, namespace: default, labels: {webhook-test: deny}}\ndata: {a: b}\n"
	_, err = newApplier(t).Apply(ctx, objs(t, y), Options{Inventory: "webhook-deny", WebhookWait: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "settings are frozen") || !strings.Contains(err.Error(), "ConfigMap/default/frozen") {
		t.Fatalf("apply through a denying webhook: %v", err)
	}
	if n := w.reviews.Load(); n != 1 {
		t.Errorf("the denying webhook was asked %d times, want once", n)
	}

	l2, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l2.Addr().String()
	_ = l2.Close()
	registerWebhook(t, "never", "https://"+addr+"/validate", ca.CertPEM())
	y = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unserved, namespace: default, labels: {webhook-test: never}}\ndata: {a: b}\n"
	_, err = newApplier(t).Apply(ctx, objs(t, y), Options{Inventory: "webhook-never", WebhookWait: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") || !strings.Contains(err.Error(), "ConfigMap/default/unserved") {
		t.Fatalf("apply through a webhook that never serves: %v", err)
	}
	// When the run's deadline ends the retries, the error still says why.
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = newApplier(t).Apply(short, objs(t, y), Options{Inventory: "webhook-never", WebhookWait: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Fatalf("apply cut short while its webhook does not answer: %v", err)
	}
}
