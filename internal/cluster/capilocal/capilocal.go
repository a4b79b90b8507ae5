package capilocal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/pki"
)

// Version is the Cluster API release the manager binaries are built from;
// it matches CAPI_VERSION in hack/testbin/versions.env (a unit test checks).
const Version = "v1.14.2"

// Names of the manager binaries hack/testbin/build.sh writes.
const (
	CoreManager                = "capi-manager"
	KubeadmBootstrapManager    = "capi-kubeadm-bootstrap-manager"
	KubeadmControlPlaneManager = "capi-kubeadm-control-plane-manager"
)

// Binaries maps a clusterctl provider label (type prefix and name, as
// clusterctlv1.ManifestLabel builds it) to the binary that runs it.
var Binaries = map[string]string{
	"cluster-api":           CoreManager,
	"bootstrap-kubeadm":     KubeadmBootstrapManager,
	"control-plane-kubeadm": KubeadmControlPlaneManager,
}

// DefaultSyncPeriod makes a Machine whose Node appears after it was
// provisioned go Running within seconds instead of the managers' default
// ten minutes.
const DefaultSyncPeriod = 20 * time.Second

// Options configure Start.
type Options struct {
	// Name prefixes the log files, to tell several clusters of one test apart.
	Name string
	// SyncPeriod of every manager; DefaultSyncPeriod when zero.
	SyncPeriod time.Duration
	// FeatureGates is passed as --feature-gates when set (for example
	// "MachinePool=true").
	FeatureGates string
	// ExtraArgs are appended to a manager's arguments, by binary name.
	ExtraArgs map[string][]string
	// LogDir holds one log file per manager and the serving certificate
	// (default: a new temporary directory the caller removes when it wants).
	LogDir string
	// Timeout bounds the start of every manager (default 2 minutes).
	Timeout time.Duration
}

// Manager is one running manager process.
type Manager struct {
	// Provider is the clusterctl provider label (cluster-api, bootstrap-kubeadm, ...).
	Provider string
	// Namespace is the provider's namespace, where its webhook Service is.
	Namespace string
	// Binary is the absolute path of the executable.
	Binary string
	// WebhookPort, HealthPort and DiagnosticsPort listen on 127.0.0.1.
	WebhookPort, HealthPort, DiagnosticsPort int
	// Log is the file that holds the process' stdout and stderr.
	Log string

	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Env is the set of managers started for one cluster.
type Env struct {
	// Managers, one per provider with a binary, in inventory order.
	Managers []*Manager
	// CABundle is the PEM CA the rewritten webhooks trust.
	CABundle []byte
	// Skipped are the providers left alone: no binary and no admission
	// webhooks. Their CRDs' conversion webhooks are their own to serve and
	// point (metal3-operator runs its own and sets its CRDs' conversion).
	Skipped []string
}

// provider is one entry of clusterctl's inventory.
type provider struct {
	label, namespace string
}

// New starts the managers of every provider `clusterctl init` installed
// into the cluster cfg reaches and returns once each is ready; the caller
// calls Stop. kubeconfig is an admin kubeconfig file of that cluster. A
// missing binary is an error wrapping local.ErrNoBinaries.
func New(ctx context.Context, cfg *rest.Config, kubeconfig string, opts Options) (*Env, error) {
	if opts.SyncPeriod == 0 {
		opts.SyncPeriod = DefaultSyncPeriod
	}
	if opts.LogDir == "" {
		d, err := os.MkdirTemp("", "airship-capienv-")
		if err != nil {
			return nil, err
		}
		opts.LogDir = d
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	providers, err := inventory(ctx, c)
	if err != nil {
		return nil, err
	}
	hooks, err := readWebhooks(ctx, c)
	if err != nil {
		return nil, err
	}
	binDir := local.DefaultBinDir()
	e := &Env{}
	var missing []string
	for _, p := range providers {
		bin, ok := Binaries[p.label]
		if !ok {
			if n := hooks.admission(p.namespace); n > 0 {
				return nil, fmt.Errorf("provider %s (namespace %s) has %d admission webhooks but no local manager binary; capienv runs %s",
					p.label, p.namespace, n, strings.Join(slices.Sorted(maps.Keys(Binaries)), ", "))
			}
			e.Skipped = append(e.Skipped, p.label)
			continue
		}
		path := filepath.Join(binDir, bin)
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			missing = append(missing, bin)
			continue
		}
		e.Managers = append(e.Managers, &Manager{Provider: p.label, Namespace: p.namespace, Binary: path})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s missing from %s; build them with `make testbin`", local.ErrNoBinaries, strings.Join(missing, ", "), binDir)
	}
	if len(e.Managers) == 0 {
		return nil, fmt.Errorf("no Cluster API provider with a local manager in clusterctl's inventory (found %d providers): run clusterctl init first", len(providers))
	}

	certDir := filepath.Join(opts.LogDir, opts.Name+"webhook-certs")
	if e.CABundle, err = writeServingCert(certDir); err != nil {
		return nil, err
	}
	if err := scaleDown(ctx, c, e.Managers); err != nil {
		return nil, err
	}
	// A port picked free can be taken before the manager binds it; start
	// everything again on fresh ports when that happens.
	for attempt := 1; ; attempt++ {
		err = e.start(ctx, c, hooks, kubeconfig, certDir, opts)
		if err == nil {
			return e, nil
		}
		_ = e.Stop()
		if attempt == 3 || !errors.Is(err, errPortTaken) {
			return nil, err
		}
	}
}

var errPortTaken = errors.New("port already in use")

func (e *Env) start(ctx context.Context, c client.Client, hooks *webhooks, kubeconfig, certDir string, opts Options) error {
	for _, m := range e.Managers {
		ports, err := freePorts(3)
		if err != nil {
			return err
		}
		m.WebhookPort, m.HealthPort, m.DiagnosticsPort = ports[0], ports[1], ports[2]
	}
	urls := map[string]string{}
	for _, m := range e.Managers {
		urls[m.Namespace] = "https://127.0.0.1:" + strconv.Itoa(m.WebhookPort)
	}
	if err := hooks.rewrite(ctx, c, urls, e.CABundle); err != nil {
		return err
	}
	for _, m := range e.Managers {
		if err := m.start(kubeconfig, certDir, opts); err != nil {
			return err
		}
	}
	for _, m := range e.Managers {
		if err := m.waitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Stop ends every manager: SIGTERM, then SIGKILL after 10 seconds.
func (e *Env) Stop() error {
	var errs []error
	for _, m := range e.Managers {
		if err := m.stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// WaitForInventory polls clusterctl's inventory in the cluster cfg reaches
// every interval until it lists every provider label of want (keys of
// Binaries, such as cluster-api), and fails naming those still missing when
// ctx ends. clusterctl init writes a provider's inventory entry after its
// components, so a listed provider's webhooks are in place.
func WaitForInventory(ctx context.Context, cfg *rest.Config, want []string, interval time.Duration) error {
	// One LIST per interval: client-side throttling would only delay it,
	// and near ctx's end report itself instead of what is missing.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, -1
	scheme := runtime.NewScheme()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last := "clusterctl's provider inventory is not installed"
	for {
		providers, err := inventory(ctx, c)
		if err == nil {
			have := map[string]bool{}
			for _, p := range providers {
				have[p.label] = true
			}
			var missing []string
			for _, w := range want {
				if !have[w] {
					missing = append(missing, w)
				}
			}
			if len(missing) == 0 {
				return nil
			}
			last = "not yet installed: " + strings.Join(missing, ", ")
		} else if ctx.Err() == nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for clusterctl init to install %s: %s: %w", strings.Join(want, ", "), last, ctx.Err())
		case <-tick.C:
		}
	}
}

// inventory lists the providers clusterctl installed.
func inventory(ctx context.Context, c client.Client) ([]provider, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(clusterctlv1.GroupVersion.WithKind("ProviderList"))
	if err := c.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, errors.New("clusterctl's provider inventory is not installed: run clusterctl init first")
		}
		return nil, fmt.Errorf("reading clusterctl's provider inventory: %w", err)
	}
	var out []provider
	for _, it := range list.Items {
		name, _, _ := unstructured.NestedString(it.Object, "providerName")
		typ, _, _ := unstructured.NestedString(it.Object, "type")
		out = append(out, provider{label: clusterctlv1.ManifestLabel(name, clusterctlv1.ProviderType(typ)), namespace: it.GetNamespace()})
	}
	return out, nil
}

// webhooks are the webhook configurations and CRDs that call a Service.
type webhooks struct {
	// Names of the webhook configurations and of the CRDs with a
	// conversion webhook.
	validating, mutating, crds []string
	// service remembers the Service each webhook called before the first
	// rewrite, so a second rewrite (fresh ports) finds its target again.
	service map[string]admissionv1.ServiceReference
}

func readWebhooks(ctx context.Context, c client.Client) (*webhooks, error) {
	w := &webhooks{service: map[string]admissionv1.ServiceReference{}}
	var vl admissionv1.ValidatingWebhookConfigurationList
	if err := c.List(ctx, &vl); err != nil {
		return nil, fmt.Errorf("listing ValidatingWebhookConfigurations: %w", err)
	}
	for i := range vl.Items {
		w.rememberHooks("validating", &vl.Items[i])
		w.validating = append(w.validating, vl.Items[i].Name)
	}
	var ml admissionv1.MutatingWebhookConfigurationList
	if err := c.List(ctx, &ml); err != nil {
		return nil, fmt.Errorf("listing MutatingWebhookConfigurations: %w", err)
	}
	for i := range ml.Items {
		w.rememberHooks("mutating", &ml.Items[i])
		w.mutating = append(w.mutating, ml.Items[i].Name)
	}
	var cl apiextensionsv1.CustomResourceDefinitionList
	if err := c.List(ctx, &cl); err != nil {
		return nil, fmt.Errorf("listing CustomResourceDefinitions: %w", err)
	}
	for i := range cl.Items {
		crd := &cl.Items[i]
		if cv := crd.Spec.Conversion; cv != nil && cv.Webhook != nil && cv.Webhook.ClientConfig != nil {
			var svc *admissionv1.ServiceReference
			if s := cv.Webhook.ClientConfig.Service; s != nil {
				svc = &admissionv1.ServiceReference{Namespace: s.Namespace, Name: s.Name, Path: s.Path}
			}
			if w.remember("crd/"+crd.Name, svc, savedServices(crd)[conversionKey]) {
				w.crds = append(w.crds, crd.Name)
			}
		}
	}
	return w, nil
}

// hooksOf returns the names and client configs of a validating or
// mutating webhook configuration's webhooks, in order.
func hooksOf(obj client.Object) (names []string, ccs []*admissionv1.WebhookClientConfig) {
	switch cfg := obj.(type) {
	case *admissionv1.ValidatingWebhookConfiguration:
		for j := range cfg.Webhooks {
			names, ccs = append(names, cfg.Webhooks[j].Name), append(ccs, &cfg.Webhooks[j].ClientConfig)
		}
	case *admissionv1.MutatingWebhookConfiguration:
		for j := range cfg.Webhooks {
			names, ccs = append(names, cfg.Webhooks[j].Name), append(ccs, &cfg.Webhooks[j].ClientConfig)
		}
	}
	return names, ccs
}

// rememberHooks remembers the Service of every webhook of a configuration
// (kind "validating" or "mutating").
func (w *webhooks) rememberHooks(kind string, obj client.Object) {
	saved := savedServices(obj)
	names, ccs := hooksOf(obj)
	for j, hook := range names {
		w.remember(kind+"/"+obj.GetName()+"/"+hook, ccs[j].Service, saved[hook])
	}
}

// ServicesAnnotation, on a webhook configuration or CRD New pointed at
// local managers, keeps the Services its webhooks called before (JSON, by
// webhook name; "conversion" for a CRD), so that managers started again
// later against the same cluster find their webhooks.
const ServicesAnnotation = "capilocal.airshipit.org/services"

const conversionKey = "conversion"

func savedServices(o metav1.Object) map[string]admissionv1.ServiceReference {
	out := map[string]admissionv1.ServiceReference{}
	if v := o.GetAnnotations()[ServicesAnnotation]; v != "" {
		_ = json.Unmarshal([]byte(v), &out) // a garbled note is as good as none
	}
	return out
}

// saveServices records on o the Services of its webhooks, by name.
func saveServices(o metav1.Object, byName map[string]admissionv1.ServiceReference) {
	if len(byName) == 0 {
		return
	}
	data, err := json.Marshal(byName)
	if err != nil {
		return
	}
	a := o.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[ServicesAnnotation] = string(data)
	o.SetAnnotations(a)
}

// remember keeps the Service a webhook calls: the one in its client
// config, else the one saved when it was pointed at a local manager. It
// reports whether there was one.
func (w *webhooks) remember(key string, s *admissionv1.ServiceReference, saved admissionv1.ServiceReference) bool {
	switch {
	case s != nil:
		w.service[key] = *s
	case saved.Name != "":
		w.service[key] = saved
	default:
		return false
	}
	return true
}

// count is the number of webhooks served from a namespace.
func (w *webhooks) count(namespace string) int {
	n := 0
	for _, s := range w.service {
		if s.Namespace == namespace {
			n++
		}
	}
	return n
}

// admission counts the validating and mutating webhooks calling a
// Service of namespace (not the CRDs' conversion webhooks).
func (w *webhooks) admission(namespace string) int {
	n := 0
	for k, s := range w.service {
		if s.Namespace == namespace && !strings.HasPrefix(k, "crd/") {
			n++
		}
	}
	return n
}

// rewrite points every webhook whose Service is in a namespace of urls at
// that URL (plus the Service's path), trusting caBundle.
func (w *webhooks) rewrite(ctx context.Context, c client.Client, urls map[string]string, caBundle []byte) error {
	target := func(key string) (string, bool) {
		s, ok := w.service[key]
		if !ok {
			return "", false
		}
		base, ok := urls[s.Namespace]
		if !ok {
			return "", false
		}
		path := ""
		if s.Path != nil {
			path = *s.Path
		}
		return base + path, true
	}
	configs := []struct {
		kind, typ string
		names     []string
		newObj    func() client.Object
	}{
		{"validating", "ValidatingWebhookConfiguration", w.validating, func() client.Object { return &admissionv1.ValidatingWebhookConfiguration{} }},
		{"mutating", "MutatingWebhookConfiguration", w.mutating, func() client.Object { return &admissionv1.MutatingWebhookConfiguration{} }},
	}
	// Each object is read again and updated with a retry on conflict: the
	// API server's own controllers update CRD status at any time.
	for _, cf := range configs {
		for _, name := range cf.names {
			obj := cf.newObj()
			err := update(ctx, c, name, obj, func() bool {
				saved := map[string]admissionv1.ServiceReference{}
				names, ccs := hooksOf(obj)
				for j, hook := range names {
					key := cf.kind + "/" + name + "/" + hook
					if u, ok := target(key); ok {
						*ccs[j] = admissionv1.WebhookClientConfig{URL: &u, CABundle: caBundle}
						saved[hook] = w.service[key]
					}
				}
				saveServices(obj, saved)
				return len(saved) > 0
			})
			if err != nil {
				return fmt.Errorf("pointing %s %s at local managers: %w", cf.typ, name, err)
			}
		}
	}
	for _, name := range w.crds {
		u, ok := target("crd/" + name)
		if !ok {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		err := update(ctx, c, name, crd, func() bool {
			if crd.Spec.Conversion == nil || crd.Spec.Conversion.Webhook == nil {
				return false
			}
			crd.Spec.Conversion.Webhook.ClientConfig = &apiextensionsv1.WebhookClientConfig{URL: &u, CABundle: caBundle}
			saveServices(crd, map[string]admissionv1.ServiceReference{conversionKey: w.service["crd/"+name]})
			return true
		})
		if err != nil {
			return fmt.Errorf("pointing the conversion webhook of CRD %s at a local manager: %w", name, err)
		}
	}
	return nil
}

// update reads a cluster-scoped object, lets change modify it and writes it
// back when change reports a change, retrying on conflicts.
func update(ctx context.Context, c client.Client, name string, o client.Object, change func() bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, o); err != nil {
			return err
		}
		if !change() {
			return nil
		}
		return c.Update(ctx, o)
	})
}

// scaleDown sets the replicas of every Deployment of the managed
// providers to 0: their Pods would never serve anything under kwok, and a
// second copy of a controller must not run.
func scaleDown(ctx context.Context, c client.Client, managers []*Manager) error {
	for _, m := range managers {
		var list appsv1.DeploymentList
		if err := c.List(ctx, &list, client.InNamespace(m.Namespace)); err != nil {
			return fmt.Errorf("listing Deployments of provider %s: %w", m.Provider, err)
		}
		for i := range list.Items {
			d := &list.Items[i]
			if d.Spec.Replicas != nil && *d.Spec.Replicas == 0 {
				continue
			}
			patch := client.MergeFrom(d.DeepCopy())
			zero := int32(0)
			d.Spec.Replicas = &zero
			if err := c.Patch(ctx, d, patch); err != nil {
				return fmt.Errorf("scaling Deployment %s/%s to 0: %w", d.Namespace, d.Name, err)
			}
		}
	}
	return nil
}

// writeServingCert issues a certificate for 127.0.0.1 from a fresh CA into
// dir (tls.crt, tls.key, the names the managers read) and returns the CA.
func writeServingCert(dir string) ([]byte, error) {
	ca, err := pki.NewCA("capienv-webhook-ca", 24*time.Hour, pki.ECDSAP256)
	if err != nil {
		return nil, err
	}
	kp, err := ca.Issue(pki.Request{CommonName: "127.0.0.1", Hosts: []string{"127.0.0.1", "localhost"}, Server: true, Validity: 24 * time.Hour})
	if err != nil {
		return nil, err
	}
	if err := kp.WriteFiles(dir, "tls"); err != nil {
		return nil, fmt.Errorf("writing webhook serving certificate: %w", err)
	}
	return ca.CertPEM(), nil
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0") //nolint:noctx // a loopback literal: nothing to resolve or cancel
		if err != nil {
			return nil, fmt.Errorf("choosing a free port: %w", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func (m *Manager) args(certDir string, opts Options) []string {
	a := []string{
		"--leader-elect=false",
		"--webhook-port=" + strconv.Itoa(m.WebhookPort),
		"--webhook-cert-dir=" + certDir,
		"--health-addr=127.0.0.1:" + strconv.Itoa(m.HealthPort),
		"--diagnostics-address=127.0.0.1:" + strconv.Itoa(m.DiagnosticsPort),
		"--insecure-diagnostics",
		"--sync-period=" + opts.SyncPeriod.String(),
	}
	if opts.FeatureGates != "" {
		a = append(a, "--feature-gates="+opts.FeatureGates)
	}
	return append(a, opts.ExtraArgs[filepath.Base(m.Binary)]...)
}

func (m *Manager) start(kubeconfig, certDir string, opts Options) error {
	m.Log = filepath.Join(opts.LogDir, opts.Name+filepath.Base(m.Binary)+".log")
	f, err := os.OpenFile(m.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	// The manager writes through its own descriptor.
	defer func() { _ = f.Close() }()
	cmd := exec.Command(m.Binary, m.args(certDir, opts)...) //nolint:noctx // the manager outlives this call; Stop ends it
	// The managers read the cluster from KUBECONFIG (controller-runtime's
	// config loading); nothing else of the test's environment matters to them.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = f, f
	// Own process group, and killed with the test binary if it dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", m.Binary, err)
	}
	m.cmd, m.done = cmd, make(chan struct{})
	go func() {
		m.err = cmd.Wait()
		close(m.done)
	}()
	return nil
}

// waitReady polls the manager's readyz endpoint (which includes its webhook
// server) until it answers 200, the process exits, or ctx ends.
func (m *Manager) waitReady(ctx context.Context) error {
	url := "http://127.0.0.1:" + strconv.Itoa(m.HealthPort) + "/readyz"
	hc := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		select {
		case <-m.done:
			err := fmt.Errorf("%s exited before it was ready (%w); log %s:\n%s", filepath.Base(m.Binary), m.err, m.Log, tail(m.Log, 20))
			if strings.Contains(tail(m.Log, 20), "address already in use") {
				return fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s (%s): %w; log %s:\n%s", filepath.Base(m.Binary), url, last, ctx.Err(), m.Log, tail(m.Log, 20))
		case <-tick.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			last = err.Error()
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		last = resp.Status
	}
}

func (m *Manager) stop(grace time.Duration) error {
	if m.cmd == nil || m.cmd.Process == nil {
		return nil
	}
	select {
	case <-m.done:
		return nil
	default:
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-m.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-m.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", filepath.Base(m.Binary), m.cmd.Process.Pid)
	}
}

// PID is the manager's process id (its own, not a wrapper's), 0 before it
// started. A benchmark reads the process' peak RSS from /proc/PID/status.
func (m *Manager) PID() int {
	if m.cmd == nil || m.cmd.Process == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

// Running reports whether the process is still alive.
func (m *Manager) Running() bool {
	if m.done == nil {
		return false
	}
	select {
	case <-m.done:
		return false
	default:
		return true
	}
}

// Tail returns the last n lines of the manager's log.
func (m *Manager) Tail(n int) string { return tail(m.Log, n) }

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = f.Close() }() // only read: closing cannot lose data
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
