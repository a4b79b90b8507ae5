package helm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v4/pkg/action"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	releasei "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// DigestLabel is the release label holding chartsource.Digest of the chart
// and values the revision was made from. Reading it back tells whether an
// upgrade would change anything, even after the operator's status is lost.
const DigestLabel = "armada.airshipit.org/digest"

// skipClientValidation turns off Helm's client-side OpenAPI validation of
// rendered manifests. It downloads and parses the server's whole OpenAPI v3
// document for every install and upgrade (three quarters of the operator's
// CPU time with 100 small charts), while the API server validates the same
// objects anyway: Helm creates and applies them with strict field
// validation, so an unknown or mistyped field still fails the action.
const skipClientValidation = true

// ErrNameInUse is returned by Install when the release already has a
// revision. Helm reads the release's history before it changes anything,
// so nothing was installed: a caller that installed without reading the
// history itself reads it now and acts on it.
var ErrNameInUse = errors.New("the release name is in use")

// nameInUse is the message Helm's install refuses a name in use with
// (action.Install's availableName); TestActions checks it still does.
const nameInUse = "cannot reuse a name that is still in use"

// maxHistory bounds the revisions kept per release, like helm-controller.
const maxHistory = 10

// Client runs Helm actions. It is safe for concurrent use: every call builds
// its own action configuration; the discovery cache, REST mapper and the
// capabilities charts render against are shared.
type Client struct {
	shared *shared
	log    slog.Handler

	// namespaces holds the release namespaces seen to exist, so each
	// install does not read its namespace again. An install that fails
	// forgets its namespace, in case it was deleted.
	namespaces sync.Map
}

// New returns a Client for the cluster cfg reaches. log receives Helm's own
// messages; nil discards them.
func New(cfg *rest.Config, log slog.Handler) *Client {
	if log == nil {
		log = slog.DiscardHandler
	}
	return &Client{shared: &shared{cfg: rest.CopyConfig(cfg)}, log: log}
}

func (c *Client) config(namespace string) (*action.Configuration, error) {
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(c.log))
	if err := cfg.Init(restClientGetter{shared: c.shared, namespace: namespace}, namespace, "secret"); err != nil {
		return nil, fmt.Errorf("helm configuration for namespace %q: %w", namespace, err)
	}
	return cfg, nil
}

// InvalidateDiscovery drops cached API discovery, for after CRDs change.
func (c *Client) InvalidateDiscovery() {
	if c.shared.init() == nil {
		c.shared.discovery.Invalidate()
	}
	c.shared.dropCapabilities()
}

// renderConfig is config for an action that renders ch: it carries the
// shared capabilities, unless the chart brings CRDs, which Helm installs
// first and must then see.
func (c *Client) renderConfig(namespace string, ch *chartv2.Chart) (*action.Configuration, error) {
	cfg, err := c.config(namespace)
	if err != nil {
		return nil, err
	}
	if len(ch.CRDObjects()) == 0 {
		caps, err := c.shared.capabilities(time.Now())
		if err != nil {
			return nil, err
		}
		cfg.Capabilities = caps
	}
	return cfg, nil
}

// recordInto makes cfg's kube client record what it applies into a (nil:
// nothing).
func recordInto(cfg *action.Configuration, a *Applied) {
	if a == nil {
		return
	}
	if kc, ok := cfg.KubeClient.(*kube.Client); ok {
		cfg.KubeClient = &recordingKube{Client: kc, into: a}
	}
}

// changedAPIs drops the shared capabilities after an action that may have
// added or removed APIs: a chart with CRDs, or a manifest defining some.
func (c *Client) changedAPIs(ch *chartv2.Chart, rel *release.Release) {
	if (ch != nil && len(ch.CRDObjects()) > 0) || (rel != nil && strings.Contains(rel.Manifest, "kind: CustomResourceDefinition")) {
		c.InvalidateDiscovery()
	}
}

// Last returns the newest revision of a release, or nil when the release
// has no revision at all.
func (c *Client) Last(namespace, name string) (*release.Release, error) {
	cfg, err := c.config(namespace)
	if err != nil {
		return nil, err
	}
	h, err := cfg.Releases.History(name)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, fmt.Errorf("reading history of release %s/%s: %w", namespace, name, err)
	}
	var last *release.Release
	for _, r := range h {
		rel, err := toV1(r)
		if err != nil {
			return nil, err
		}
		if last == nil || rel.Version > last.Version {
			last = rel
		}
	}
	return last, nil
}

// History returns every stored revision of a release, oldest first order not
// guaranteed.
func (c *Client) History(namespace, name string) ([]*release.Release, error) {
	cfg, err := c.config(namespace)
	if err != nil {
		return nil, err
	}
	h, err := cfg.Releases.History(name)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, fmt.Errorf("reading history of release %s/%s: %w", namespace, name, err)
	}
	out := make([]*release.Release, 0, len(h))
	for _, r := range h {
		rel, err := toV1(r)
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	return out, nil
}

func toV1(r releasei.Releaser) (*release.Release, error) {
	switch rel := r.(type) {
	case *release.Release:
		return rel, nil
	case release.Release:
		return &rel, nil
	default:
		return nil, fmt.Errorf("unsupported release record type %T", r)
	}
}

// Options are the settings shared by install and upgrade.
type Options struct {
	Namespace string
	Name      string
	Chart     *chartv2.Chart
	// Values are the user-supplied values; they are never logged.
	Values map[string]any
	// Digest is stored as DigestLabel on the new revision.
	Digest string
	// Timeout bounds hooks and, with NativeWait, Helm's own wait.
	Timeout time.Duration
	// NativeWait turns on Helm's wait for every resource of the release.
	NativeWait bool
	NoHooks    bool
	// Force replaces resources that cannot be patched (upgrade only).
	Force bool
	// ForceConflicts makes a server-side-apply upgrade take over fields
	// another manager changed (healing a hand change).
	ForceConflicts bool
	// Applied, when set, records the objects the action created or
	// updated, as the API server answered.
	Applied *Applied
}

func (o Options) strategy() kube.WaitStrategy {
	if o.NativeWait {
		return kube.StatusWatcherStrategy
	}
	return kube.HookOnlyStrategy
}

// Install installs a new release, creating its namespace if needed.
// Helm's CreateNamespace validates a Namespace against the server's OpenAPI
// document on every install; creating it here costs one GET, and none for
// a namespace this client saw before. Should a namespace it remembers have
// been deleted since, the install fails before Helm records anything: the
// namespace is created again, and the install run once more. A release
// with a revision already is refused with ErrNameInUse.
func (c *Client) Install(ctx context.Context, o Options) (*release.Release, error) {
	ns, err := c.ensureNamespace(ctx, o.Namespace)
	if err != nil {
		return nil, err
	}
	rel, err := c.install(ctx, o)
	if err != nil && !errors.Is(err, ErrNameInUse) {
		c.namespaces.Delete(o.Namespace)
		if ns == namespaceRemembered {
			if again, nerr := c.ensureNamespace(ctx, o.Namespace); nerr == nil && again == namespaceCreated {
				return c.install(ctx, o)
			}
		}
	}
	return rel, err
}

func (c *Client) install(ctx context.Context, o Options) (*release.Release, error) {
	cfg, err := c.renderConfig(o.Namespace, o.Chart)
	if err != nil {
		return nil, err
	}
	recordInto(cfg, o.Applied)
	in := action.NewInstall(cfg)
	in.Namespace = o.Namespace
	in.ReleaseName = o.Name
	in.Timeout = o.Timeout
	in.WaitStrategy = o.strategy()
	in.WaitForJobs = o.NativeWait
	in.DisableHooks = o.NoHooks
	in.Labels = map[string]string{DigestLabel: o.Digest}
	in.DisableOpenAPIValidation = skipClientValidation
	r, err := in.RunWithContext(ctx, o.Chart, o.Values)
	if err != nil && strings.HasSuffix(err.Error(), nameInUse) {
		return nil, fmt.Errorf("helm install of release %s/%s: %w", o.Namespace, o.Name, ErrNameInUse)
	}
	rel, err := result(r, err, "install", o.Namespace, o.Name)
	c.changedAPIs(o.Chart, rel)
	return rel, err
}

// namespaceState is how ensureNamespace made sure of a namespace.
type namespaceState int

const (
	// namespaceRemembered: seen before, not read again.
	namespaceRemembered namespaceState = iota
	// namespaceFound: read, and it exists.
	namespaceFound
	// namespaceCreated: it did not exist and was created.
	namespaceCreated
)

// ensureNamespace creates the release namespace when it does not exist,
// labelled as Helm labels the namespaces it creates.
func (c *Client) ensureNamespace(ctx context.Context, name string) (namespaceState, error) {
	if _, ok := c.namespaces.Load(name); ok {
		return namespaceRemembered, nil
	}
	if err := c.shared.init(); err != nil {
		return 0, err
	}
	nss := c.shared.clients.CoreV1().Namespaces()
	state := namespaceFound
	_, err := nss.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		state = namespaceCreated
		_, err = nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"name": name}}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return 0, fmt.Errorf("creating namespace %q for a release: %w", name, err)
	}
	c.namespaces.Store(name, struct{}{})
	return state, nil
}

// Upgrade upgrades an existing release to exactly o.Values (the values of
// earlier revisions are not reused).
func (c *Client) Upgrade(ctx context.Context, o Options) (*release.Release, error) {
	cfg, err := c.renderConfig(o.Namespace, o.Chart)
	if err != nil {
		return nil, err
	}
	recordInto(cfg, o.Applied)
	up := action.NewUpgrade(cfg)
	up.Namespace = o.Namespace
	up.Timeout = o.Timeout
	up.WaitStrategy = o.strategy()
	up.WaitForJobs = o.NativeWait
	up.DisableHooks = o.NoHooks
	up.ForceReplace = o.Force
	up.ForceConflicts = o.ForceConflicts
	up.ResetValues = true
	up.MaxHistory = maxHistory
	up.Labels = map[string]string{DigestLabel: o.Digest}
	up.DisableOpenAPIValidation = skipClientValidation
	r, err := up.RunWithContext(ctx, o.Name, o.Chart, o.Values)
	rel, err := result(r, err, "upgrade", o.Namespace, o.Name)
	c.changedAPIs(o.Chart, rel)
	return rel, err
}

func result(r releasei.Releaser, err error, verb, namespace, name string) (*release.Release, error) {
	var rel *release.Release
	if r != nil {
		if v, cerr := toV1(r); cerr == nil {
			rel = v
		}
	}
	if err != nil {
		return rel, fmt.Errorf("helm %s of release %s/%s: %w", verb, namespace, name, err)
	}
	return rel, nil
}

// Uninstall removes a release and waits up to timeout for its resources to
// go. A release that does not exist is not an error.
func (c *Client) Uninstall(namespace, name string, timeout time.Duration) error {
	cfg, err := c.config(namespace)
	if err != nil {
		return err
	}
	un := action.NewUninstall(cfg)
	un.Timeout = timeout
	un.WaitStrategy = kube.StatusWatcherStrategy
	un.IgnoreNotFound = true
	res, err := un.Run(name)
	if res != nil {
		if rel, cerr := toV1(res.Release); cerr == nil {
			c.changedAPIs(nil, rel)
		}
	}
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return fmt.Errorf("helm uninstall of release %s/%s: %w", namespace, name, err)
	}
	return nil
}

// Rollback rolls a release back to revision version (0 means the previous
// one) and returns the revision the rollback created. Labels, values and
// manifest are the target revision's, so DigestLabel names what is running
// again.
func (c *Client) Rollback(namespace, name string, version int, timeout time.Duration) (*release.Release, error) {
	cfg, err := c.config(namespace)
	if err != nil {
		return nil, err
	}
	rb := action.NewRollback(cfg)
	rb.Version = version
	rb.Timeout = timeout
	rb.WaitStrategy = kube.HookOnlyStrategy
	rb.MaxHistory = maxHistory
	rb.ServerSideApply = "auto"
	rb.Description = fmt.Sprintf("Rollback to %d by the Armada operator", version)
	runErr := rb.Run(name)
	// The new revision is recorded even when the rollback fails.
	last, err := c.Last(namespace, name)
	if runErr != nil {
		return last, fmt.Errorf("helm rollback of release %s/%s to revision %d: %w", namespace, name, version, runErr)
	}
	return last, err
}

// LastSuccessful returns the version of the newest revision below before
// (all revisions when before is 0) that Helm reports deployed or superseded,
// the revisions that were once the release's good state; 0 when there is
// none. Revisions that failed, on Helm's side or the operator's wait, are
// marked failed and never count.
func (c *Client) LastSuccessful(namespace, name string, before int) (int, error) {
	h, err := c.History(namespace, name)
	if err != nil {
		return 0, err
	}
	best := 0
	for _, rel := range h {
		if before > 0 && rel.Version >= before {
			continue
		}
		if s := rel.Info; s != nil && (s.Status == rcommon.StatusDeployed || s.Status == rcommon.StatusSuperseded) && rel.Version > best {
			best = rel.Version
		}
	}
	return best, nil
}

// Test runs the release's test hooks. cleanup deletes the test pods after
// they finish.
func (c *Client) Test(namespace, name string, timeout time.Duration, cleanup bool) error {
	cfg, err := c.config(namespace)
	if err != nil {
		return err
	}
	t := action.NewReleaseTesting(cfg)
	t.Namespace = namespace
	t.Timeout = timeout
	_, shutdown, err := t.Run(name)
	if cleanup && shutdown != nil {
		// The shutdown function deletes test hooks whose delete policy allows;
		// its error is secondary to the test's.
		_ = shutdown()
	}
	if err != nil {
		return fmt.Errorf("helm test of release %s/%s: %w", namespace, name, err)
	}
	return nil
}

// Unlock marks a revision stuck in a pending state (its operator died in
// the middle of an action) as failed, so Helm accepts a new action on the
// release. It returns false when the revision was not pending.
func (c *Client) Unlock(namespace string, rel *release.Release) (bool, error) {
	if rel == nil || rel.Info == nil || !rel.Info.Status.IsPending() {
		return false, nil
	}
	prev := rel.Info.Status
	if err := c.MarkFailed(namespace, rel, fmt.Sprintf("marked failed by the Armada operator: found %s with no action in progress", prev)); err != nil {
		return false, err
	}
	return true, nil
}

// MarkFailed records rel as failed with description, for a revision Helm
// deployed but the operator's own checks (its wait) rejected. Helm then
// treats it like a failed action: it is no rollback target, and the next
// upgrade starts from the last deployed revision.
func (c *Client) MarkFailed(namespace string, rel *release.Release, description string) error {
	cfg, err := c.config(namespace)
	if err != nil {
		return err
	}
	rel.Info.Status = rcommon.StatusFailed
	rel.Info.Description = description
	if err := cfg.Releases.Update(rel); err != nil {
		return fmt.Errorf("marking release %s/%s revision %d failed: %w", namespace, rel.Name, rel.Version, err)
	}
	return nil
}

// Drift lists the objects of a release's manifest that no longer exist in
// the cluster, and those whose live spec (or data) no longer holds what the
// manifest sets, each as "Kind ns/name": what healing puts back. Fields the
// manifest does not set (defaults, status, other managers' fields) are
// ignored; scalars compare by their printed form and quantities by value.
func (c *Client) Drift(rel *release.Release) (missing, changed []string, err error) {
	cfg, err := c.config(rel.Namespace)
	if err != nil {
		return nil, nil, err
	}
	resources, err := cfg.KubeClient.Build(strings.NewReader(rel.Manifest), false)
	if err != nil {
		return nil, nil, fmt.Errorf("reading manifest of release %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	for _, info := range resources {
		id := fmt.Sprintf("%s %s/%s", info.Mapping.GroupVersionKind.Kind, info.Namespace, info.Name)
		desired, derr := runtime.DefaultUnstructuredConverter.ToUnstructured(info.Object)
		if err := info.Get(); err != nil {
			if apierrors.IsNotFound(err) {
				missing = append(missing, id)
				continue
			}
			return nil, nil, fmt.Errorf("reading %s of release %s/%s: %w", id, rel.Namespace, rel.Name, err)
		}
		if derr != nil {
			continue
		}
		live, err := runtime.DefaultUnstructuredConverter.ToUnstructured(info.Object)
		if err != nil {
			continue
		}
		for _, section := range []string{"spec", "data"} {
			if d, ok := desired[section]; ok && !contains(d, live[section]) {
				changed = append(changed, id)
				break
			}
		}
	}
	return missing, changed, nil
}

// contains reports whether live holds everything desired sets.
func contains(desired, live any) bool {
	switch d := desired.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return len(d) == 0 && live == nil
		}
		for k, dv := range d {
			if dv == nil {
				continue
			}
			if !contains(dv, l[k]) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(d) {
			return len(d) == 0 && live == nil
		}
		for i := range d {
			if !contains(d[i], l[i]) {
				return false
			}
		}
		return true
	default:
		if live == nil {
			return false
		}
		ds, ls := fmt.Sprint(desired), fmt.Sprint(live)
		if ds == ls {
			return true
		}
		dq, err1 := resource.ParseQuantity(ds)
		lq, err2 := resource.ParseQuantity(ls)
		return err1 == nil && err2 == nil && dq.Cmp(lq) == 0
	}
}
