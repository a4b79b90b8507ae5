package helm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/action"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	releasei "helm.sh/helm/v4/pkg/release"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// DigestLabel is the release label holding chartsource.Digest of the chart
// and values the revision was made from. Reading it back tells whether an
// upgrade would change anything, even after the operator's status is lost.
const DigestLabel = "armada.airshipit.org/digest"

// maxHistory bounds the revisions kept per release, like helm-controller.
const maxHistory = 10

// Client runs Helm actions. It is safe for concurrent use: every call builds
// its own action configuration and only the discovery cache is shared.
type Client struct {
	shared *shared
	log    slog.Handler
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
}

func (o Options) strategy() kube.WaitStrategy {
	if o.NativeWait {
		return kube.StatusWatcherStrategy
	}
	return kube.HookOnlyStrategy
}

// Install installs a new release, creating its namespace if needed.
func (c *Client) Install(ctx context.Context, o Options) (*release.Release, error) {
	cfg, err := c.config(o.Namespace)
	if err != nil {
		return nil, err
	}
	in := action.NewInstall(cfg)
	in.Namespace = o.Namespace
	in.ReleaseName = o.Name
	in.CreateNamespace = true
	in.Timeout = o.Timeout
	in.WaitStrategy = o.strategy()
	in.WaitForJobs = o.NativeWait
	in.DisableHooks = o.NoHooks
	in.Labels = map[string]string{DigestLabel: o.Digest}
	r, err := in.RunWithContext(ctx, o.Chart, o.Values)
	return result(r, err, "install", o.Namespace, o.Name)
}

// Upgrade upgrades an existing release to exactly o.Values (the values of
// earlier revisions are not reused).
func (c *Client) Upgrade(ctx context.Context, o Options) (*release.Release, error) {
	cfg, err := c.config(o.Namespace)
	if err != nil {
		return nil, err
	}
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
	r, err := up.RunWithContext(ctx, o.Name, o.Chart, o.Values)
	return result(r, err, "upgrade", o.Namespace, o.Name)
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
	if _, err := un.Run(name); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return fmt.Errorf("helm uninstall of release %s/%s: %w", namespace, name, err)
	}
	return nil
}

// Rollback rolls a release back to revision version (0 means the previous
// one).
func (c *Client) Rollback(namespace, name string, version int, timeout time.Duration) error {
	cfg, err := c.config(namespace)
	if err != nil {
		return err
	}
	rb := action.NewRollback(cfg)
	rb.Version = version
	rb.Timeout = timeout
	rb.WaitStrategy = kube.HookOnlyStrategy
	rb.MaxHistory = maxHistory
	rb.ServerSideApply = "auto"
	if err := rb.Run(name); err != nil {
		return fmt.Errorf("helm rollback of release %s/%s to revision %d: %w", namespace, name, version, err)
	}
	return nil
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
	cfg, err := c.config(namespace)
	if err != nil {
		return false, err
	}
	prev := rel.Info.Status
	rel.Info.Status = "failed"
	rel.Info.Description = fmt.Sprintf("marked failed by the Armada operator: found %s with no action in progress", prev)
	if err := cfg.Releases.Update(rel); err != nil {
		return false, fmt.Errorf("unlocking release %s/%s revision %d: %w", namespace, rel.Name, rel.Version, err)
	}
	return true, nil
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
