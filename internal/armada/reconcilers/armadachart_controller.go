package reconcilers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/chartsource"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// Finalizer keeps an ArmadaChart until its release is uninstalled.
const Finalizer = "armada.airshipit.org/finalizer"

// ReleasePrefixAnnotation carries the release_prefix of the ArmadaManifest
// that deploys a chart; the release is then named "<prefix>-<release>".
const ReleasePrefixAnnotation = "armada.airshipit.org/release-prefix"

// TestChartsAnnotation carries the test_charts of the ArmadaChartGroup a
// chart belongs to: "true" or "false" replaces the default of test.enabled.
const TestChartsAnnotation = "armada.airshipit.org/test-charts"

// releaseKeyIndex indexes ArmadaCharts by "<release namespace>/<release
// name>", so a change to a release's workload finds its chart.
const releaseKeyIndex = "armada.airshipit.org/release-key"

// Helm's annotations on every object of a release.
const (
	helmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	helmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
)

// Condition reasons.
const (
	ReasonSucceeded       = "Succeeded"
	ReasonSatisfied       = "Satisfied"
	ReasonProgressing     = "Progressing"
	ReasonWaiting         = "Waiting"
	ReasonWaitTimeout     = "WaitTimeout"
	ReasonFailed          = "Failed"
	ReasonChartNotFound   = "ChartNotFound"
	ReasonInvalidChart    = "InvalidChart"
	ReasonInvalidValues   = "InvalidValues"
	ReasonProtected       = "ProtectedReleaseFailed"
	ReasonUninitialized   = "Uninitialized"
	ReasonUninstalled     = "Uninstalled"
	ReasonDeleting        = "Deleting"
	ReasonTestFailed      = "TestFailed"
	ReasonUninstallFailed = "UninstallFailed"
	// ReasonFetchingSource: the archive source.location names is being
	// fetched in the background; the chart is reconciled again when the
	// fetch ends.
	ReasonFetchingSource = "FetchingSource"
	// ReasonSourceFetchFailed: fetching source.location failed in a way a
	// retry may fix (it timed out, the server failed); the chart retries.
	ReasonSourceFetchFailed = "SourceFetchFailed"
)

// ArmadaChartReconciler reconciles ArmadaChart objects.
type ArmadaChartReconciler struct {
	Client client.Client
	// APIReader reads the ArmadaChart itself uncached at the start of a
	// reconcile, so status is never computed from a stale copy; nil uses
	// Client.
	APIReader client.Reader
	Helm      *helm.Client
	// Loader reads chart sources. SetupWithManager gives it a Fetcher that
	// notifies this controller, so a reconcile never waits on a remote
	// server.
	Loader   chartsource.Loader
	Recorder recorder.EventRecorder

	// FetchTimeout bounds one fetch of an http(s) archive; 0 means
	// chartsource.DefaultFetchTimeout. MaxFetches bounds the fetches in
	// flight; 0 means chartsource.DefaultMaxFetches.
	FetchTimeout time.Duration
	MaxFetches   int

	// MaxConcurrentReconciles is how many charts are worked on at once.
	MaxConcurrentReconciles int
	// PollInterval is how often a release whose workloads are not ready yet
	// is looked at again when no watched object changes. Default 5s.
	PollInterval time.Duration
	// RetryInterval is the delay before the first retry of a failed
	// reconcile; it doubles with each consecutive failure (status.failures)
	// up to MaxRetryInterval. Defaults 2s and 5m.
	RetryInterval    time.Duration
	MaxRetryInterval time.Duration
	// Now returns the current time; tests may replace it.
	Now func() time.Time

	// heals remembers, per release, the revision a heal of hand-changed
	// objects produced, so a drift the upgrade cannot undo is not healed in
	// a loop. It lives in memory: a restarted operator tries once more.
	healMu sync.Mutex
	heals  map[string]int

	// retries holds, per ArmadaChart, when a failed generation (and target
	// state) may be tried again. Events of the release's own workloads (a
	// rollback changes them) would otherwise start the next attempt at once.
	// A restarted operator retries at once.
	retryMu sync.Mutex
	retries map[types.NamespacedName]retryAt

	// applied holds, per ArmadaChart, what its last Helm action made: the
	// revision, and the workloads the cache did not hold yet
	// (armadachart_applied.go). It lives in memory: after a restart the
	// cache starts from a fresh list, and Helm's records are read.
	appliedMu sync.Mutex
	applied   map[types.NamespacedName]*appliedSet

	// passes holds the ArmadaCharts a pass is under way on.
	passMu sync.Mutex
	passes map[types.NamespacedName]bool

	// written holds, per ArmadaChart, what its last pass left it at: the
	// resourceVersion (its status write's, or the version it read when it
	// wrote nothing) and whether it ended waiting for its workloads. A pass
	// reads the chart from the cache only when the cache holds that
	// version (readChart); a workload event that comes before the cache
	// holds it takes the wait from here (leftWaiting).
	writtenMu sync.Mutex
	written   map[types.NamespacedName]writtenState
}

// readChart reads the ArmadaChart key for a pass from the cache, unless
// this process wrote the chart last (its last pass left it at a version)
// and the cache does not hold that version: then from the API server
// (APIReader), so status is never computed from a copy older than this
// operator's own last write. A newer version than the cache's would be a
// new event, and the status write's optimistic lock refuses a stale base.
// A chart the cache lacks is read from the API server too.
func (r *ArmadaChartReconciler) readChart(ctx context.Context, key types.NamespacedName, obj *armadav1.ArmadaChart) error {
	if r.APIReader == nil {
		return r.Client.Get(ctx, key, obj)
	}
	if err := r.Client.Get(ctx, key, obj); err == nil {
		if rv := r.writtenVersion(key); rv == "" || obj.ResourceVersion == rv {
			return nil
		}
	}
	return r.APIReader.Get(ctx, key, obj)
}

// writtenState is what a chart's last pass left it at.
type writtenState struct {
	version string
	// waiting: the pass ended waiting for the workloads of the release at
	// this generation and target state.
	waiting    bool
	generation int64
	target     armadav1.TargetState
}

func (r *ArmadaChartReconciler) writtenVersion(key types.NamespacedName) string {
	r.writtenMu.Lock()
	defer r.writtenMu.Unlock()
	return r.written[key].version
}

// setWritten records what a pass left the chart c at; nil forgets key.
func (r *ArmadaChartReconciler) setWritten(key types.NamespacedName, c *armadav1.ArmadaChart) {
	r.writtenMu.Lock()
	defer r.writtenMu.Unlock()
	if c == nil {
		delete(r.written, key)
		return
	}
	if r.written == nil {
		r.written = map[types.NamespacedName]writtenState{}
	}
	r.written[key] = writtenState{version: c.ResourceVersion, waiting: waitPhaseOf(c) == waitPending, generation: c.Generation, target: c.Status.TargetState}
}

// leftWaiting reports whether the last pass on c, at c's generation and
// target state, ended waiting for its workloads: what c's status says
// once the cache holds that pass's write.
func (r *ArmadaChartReconciler) leftWaiting(c *armadav1.ArmadaChart) bool {
	t, err := chartTarget(c)
	if err != nil {
		return false
	}
	r.writtenMu.Lock()
	defer r.writtenMu.Unlock()
	w, ok := r.written[client.ObjectKeyFromObject(c)]
	return ok && w.waiting && w.generation == c.Generation && w.target == t
}

// inPass reports whether a pass on the chart key is under way.
func (r *ArmadaChartReconciler) inPass(key types.NamespacedName) bool {
	r.passMu.Lock()
	defer r.passMu.Unlock()
	return r.passes[key]
}

// startPass marks a pass on key under way until the returned function is
// called.
func (r *ArmadaChartReconciler) startPass(key types.NamespacedName) (end func()) {
	r.passMu.Lock()
	defer r.passMu.Unlock()
	if r.passes == nil {
		r.passes = map[types.NamespacedName]bool{}
	}
	r.passes[key] = true
	return func() {
		r.passMu.Lock()
		defer r.passMu.Unlock()
		delete(r.passes, key)
	}
}

type retryAt struct {
	generation int64
	target     armadav1.TargetState
	at         time.Time
}

// retryPending returns how long the failed generation gen of a chart must
// still wait before its next attempt at target, 0 when it may go ahead: a
// new spec or a new target state from the chart's group goes ahead at once.
func (r *ArmadaChartReconciler) retryPending(key types.NamespacedName, gen int64, target armadav1.TargetState) time.Duration {
	r.retryMu.Lock()
	defer r.retryMu.Unlock()
	ra, ok := r.retries[key]
	if !ok || ra.generation != gen || ra.target != target {
		return 0
	}
	return max(ra.at.Sub(r.Now()), 0)
}

// setRetry records the next attempt of a failed generation and target; a
// zero delay forgets it.
func (r *ArmadaChartReconciler) setRetry(key types.NamespacedName, gen int64, target armadav1.TargetState, delay time.Duration) {
	r.retryMu.Lock()
	defer r.retryMu.Unlock()
	if delay == 0 {
		delete(r.retries, key)
		return
	}
	if r.retries == nil {
		r.retries = map[types.NamespacedName]retryAt{}
	}
	r.retries[key] = retryAt{generation: gen, target: target, at: r.Now().Add(delay)}
}

func (r *ArmadaChartReconciler) healedAt(ns, name string) int {
	r.healMu.Lock()
	defer r.healMu.Unlock()
	return r.heals[releaseKey(ns, name)]
}

func (r *ArmadaChartReconciler) markHeal(ns, name string, revision int) {
	r.healMu.Lock()
	defer r.healMu.Unlock()
	if r.heals == nil {
		r.heals = map[string]int{}
	}
	r.heals[releaseKey(ns, name)] = revision
}

// ReleaseName is the Helm release name of a chart: spec.release, prefixed
// with the deploying manifest's release_prefix when there is one.
func ReleaseName(c *armadav1.ArmadaChart) string {
	if p := c.Annotations[ReleasePrefixAnnotation]; p != "" {
		return p + "-" + c.Spec.Release
	}
	return c.Spec.Release
}

func releaseKey(namespace, name string) string { return namespace + "/" + name }

// SetupWithManager registers the reconciler, its index and its watches on
// the release's workloads.
func (r *ArmadaChartReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.PollInterval == 0 {
		r.PollInterval = 5 * time.Second
	}
	if r.MaxConcurrentReconciles == 0 {
		r.MaxConcurrentReconciles = 4
	}
	if r.RetryInterval == 0 {
		r.RetryInterval = 2 * time.Second
	}
	if r.MaxRetryInterval == 0 {
		r.MaxRetryInterval = 5 * time.Minute
	}
	// Archives are fetched outside the reconcile workers: a chart whose
	// fetch is in flight returns at once, and is enqueued again through
	// fetched when the fetch ends.
	fetched := make(chan event.TypedGenericEvent[*armadav1.ArmadaChart])
	r.Loader.Fetcher = chartsource.NewFetcher(ctx, chartsource.FetchOptions{
		Timeout:    r.FetchTimeout,
		MaxFetches: r.MaxFetches,
		Notify: func(key types.NamespacedName) {
			ev := event.TypedGenericEvent[*armadav1.ArmadaChart]{Object: &armadav1.ArmadaChart{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}}
			go func() {
				select {
				case fetched <- ev:
				case <-ctx.Done():
				}
			}()
		},
	})
	if err := indexCharts(ctx, mgr); err != nil {
		return err
	}
	// A release's workloads: a change starts a pass, and the last of them
	// to become ready satisfies a waiting chart ahead of other work
	// (armadachart_readiness.go).
	toChart := r.workloadHandler()
	ofRelease := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetAnnotations()[helmReleaseNameAnnotation] != ""
	}))
	return ctrl.NewControllerManagedBy(mgr).
		For(&armadav1.ArmadaChart{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		// A dependency is vendored into its dependents: a new spec of it (or
		// its creation, for a dependent stalled on DependencyMissing) is a
		// new chart for them.
		Watches(&armadav1.ArmadaChart{}, handler.EnqueueRequestsFromMapFunc(r.dependentsOf), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// A new or changed object spec.valuesFrom names is new values. Only
		// metadata is cached: the content is read when a chart needs it.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.chartsReadingValues("Secret")), builder.OnlyMetadata,
			builder.WithPredicates(predicate.ResourceVersionChangedPredicate{})).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.chartsReadingValues("ConfigMap")), builder.OnlyMetadata,
			builder.WithPredicates(predicate.ResourceVersionChangedPredicate{})).
		Watches(&appsv1.Deployment{}, toChart, ofRelease).
		Watches(&appsv1.StatefulSet{}, toChart, ofRelease).
		Watches(&appsv1.DaemonSet{}, toChart, ofRelease).
		Watches(&batchv1.Job{}, toChart, ofRelease).
		WatchesRawSource(source.Channel(fetched, &handler.TypedEnqueueRequestForObject[*armadav1.ArmadaChart]{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles, NewQueue: newChartQueue(mgr.GetLogger())}).
		Named("armadachart").
		Complete(r)
}

// indexCharts registers the cache indexes the chart controller's event
// handlers look ArmadaCharts up by.
func indexCharts(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &armadav1.ArmadaChart{}, releaseKeyIndex, func(o client.Object) []string {
		c := o.(*armadav1.ArmadaChart)
		return []string{releaseKey(c.Spec.Namespace, ReleaseName(c))}
	}); err != nil {
		return fmt.Errorf("indexing ArmadaCharts by release: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &armadav1.ArmadaChart{}, dependencyIndex, func(o client.Object) []string {
		return o.(*armadav1.ArmadaChart).Spec.Dependencies
	}); err != nil {
		return fmt.Errorf("indexing ArmadaCharts by dependency: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &armadav1.ArmadaChart{}, valuesFromIndex, valuesFromKeys); err != nil {
		return fmt.Errorf("indexing ArmadaCharts by spec.valuesFrom: %w", err)
	}
	return nil
}

// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadacharts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadacharts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadacharts/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile drives one ArmadaChart: fetch, finalizer, then either delete
// or the deploy steps, with status written once at the end.
func (r *ArmadaChartReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	defer r.startPass(req.NamespacedName)()
	obj := &armadav1.ArmadaChart{}
	if err := r.readChart(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.setRetry(req.NamespacedName, 0, "", 0)
			r.setApplied(req.NamespacedName, nil)
			r.setWritten(req.NamespacedName, nil)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !obj.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, obj)
	}

	if _, err := operatorkit.EnsureFinalizer(ctx, r.Client, obj, Finalizer); err != nil {
		return ctrl.Result{}, err
	}

	target, terr := chartTarget(obj)
	if d := r.retryPending(req.NamespacedName, obj.Generation, target); d > 0 {
		return ctrl.Result{RequeueAfter: d}, nil
	}

	snap := operatorkit.SnapshotStatus(obj)
	if obj.Status.ObservedGeneration != obj.Generation || obj.Status.TargetState != target {
		// The counters are per generation and target state: a new spec, or
		// a new target from the chart's group, starts afresh, and so does
		// its retry backoff.
		obj.Status.Failures, obj.Status.InstallFailures, obj.Status.UpgradeFailures = 0, 0, 0
	}
	// Set first, so a group reads a stall below as one of this target.
	obj.Status.TargetState = target
	// Values from Secrets and ConfigMaps only matter to a release being
	// deployed; a chart waiting to be enabled does not wait for them.
	values, verr := valuesOf(obj)
	if verr == nil && terr == nil && target != armadav1.TargetStateUninitialized && target != armadav1.TargetStateUninstalled {
		values, verr = r.chartValues(ctx, obj, values)
	}
	scrub := newScrubber(values)
	defer func() {
		res, retErr = r.finish(ctx, obj, snap, retErr, scrub)
	}()
	if terr != nil {
		return ctrl.Result{}, operatorkit.Stall(ReasonInvalidTargetState, fmt.Errorf("ArmadaChart %s/%s: %w", obj.Namespace, obj.Name, terr))
	}
	if verr != nil {
		return ctrl.Result{}, verr
	}
	obj.Status.ReleaseName = ReleaseName(obj)
	log = log.WithValues("release", obj.Status.ReleaseName, "releaseNamespace", obj.Spec.Namespace)
	ctx = ctrl.LoggerInto(ctx, log)

	switch obj.Status.TargetState {
	case armadav1.TargetStateUninitialized:
		obj.Status.State = armadav1.StateUninitialized
		return ctrl.Result{}, nil
	case armadav1.TargetStateUninstalled:
		return ctrl.Result{}, r.reconcileUninstalled(ctx, obj)
	default:
		return ctrl.Result{}, r.reconcileDeployed(ctx, obj, values)
	}
}

// chartTarget is the target state of a chart: its group's
// TargetStateAnnotation, else spec.target_state.
func chartTarget(c *armadav1.ArmadaChart) (armadav1.TargetState, error) {
	return effectiveTarget(c, c.Spec.TargetState)
}

// valuesOf decodes spec.values into the map Helm takes.
func valuesOf(c *armadav1.ArmadaChart) (map[string]any, error) {
	if c.Spec.Values == nil || len(c.Spec.Values.Raw) == 0 || string(c.Spec.Values.Raw) == "null" {
		return map[string]any{}, nil
	}
	var v map[string]any
	if err := json.Unmarshal(c.Spec.Values.Raw, &v); err != nil {
		return nil, operatorkit.Stall(ReasonInvalidValues, fmt.Errorf("ArmadaChart %s/%s: spec.values: must be an object", c.Namespace, c.Name))
	}
	if v == nil {
		v = map[string]any{}
	}
	return v, nil
}

// finish writes the pass's outcome into status (conditions, counters,
// observedGeneration), records the events of a change, and patches status
// once. No outcome is returned as an error: a failure is retried after the
// backoff its status.failures gives, logged here without values, rather
// than after the work queue's own backoff, which every successful poll of a
// wait would reset.
func (r *ArmadaChartReconciler) finish(ctx context.Context, obj *armadav1.ArmadaChart, snap *operatorkit.StatusSnapshot, err error, scrub scrubber) (ctrl.Result, error) {
	base := snap.Before().(*armadav1.ArmadaChart)
	obj.Status.ObservedGeneration = obj.Generation
	o := operatorkit.OutcomeOf(err, ReasonFailed)
	var res ctrl.Result
	switch o.Kind {
	case operatorkit.Succeeded:
		r.succeeded(obj, base)
	case operatorkit.Waiting:
		res = r.waiting(obj, base, o, scrub)
	case operatorkit.Stalled:
		r.stalled(ctx, obj, base, o, scrub)
	default:
		res = r.failed(ctx, obj, o, scrub)
	}
	if o.Kind != operatorkit.Failed {
		r.setRetry(client.ObjectKeyFromObject(obj), obj.Generation, obj.Status.TargetState, 0)
	}
	// On a conflict the pass starts over from the new version: Helm's
	// records, not this status, are the source of truth for what was done.
	perr := snap.Patch(ctx, r.Client, obj)
	if perr == nil {
		r.setWritten(client.ObjectKeyFromObject(obj), obj)
	} else {
		r.setWritten(client.ObjectKeyFromObject(obj), nil)
	}
	return operatorkit.Settle(res, nil, perr)
}

// conditions writes the chart's conditions for its current generation.
func conditions(obj *armadav1.ArmadaChart) operatorkit.Conditions {
	return operatorkit.Conditions{List: &obj.Status.Conditions, Generation: obj.Generation}
}

// succeeded reports a pass that did all it had to: Ready, and a Satisfied
// event when the release newly reached its target state.
func (r *ArmadaChartReconciler) succeeded(obj, base *armadav1.ArmadaChart) {
	st := &obj.Status
	st.Satisfied = string(st.State) == string(st.TargetState)
	st.Failures = 0
	reason, msg := ReasonSucceeded, fmt.Sprintf("release %s is %s", st.ReleaseName, st.State)
	switch st.TargetState {
	case armadav1.TargetStateUninitialized:
		reason, msg = ReasonUninitialized, "target_state is uninitialized; the release is left alone"
	case armadav1.TargetStateUninstalled:
		reason = ReasonUninstalled
	}
	conditions(obj).SetOutcome(operatorkit.Outcome{Kind: operatorkit.Succeeded}, reason, msg, nil, "")
	newly := !base.Status.Satisfied || base.Status.State != st.State || base.Status.HelmRevision != st.HelmRevision
	r.events().OnTransition(st.Satisfied && st.TargetState != armadav1.TargetStateUninitialized && newly,
		obj, corev1.EventTypeNormal, ReasonSatisfied, "Reconcile", msg)
}

// waiting reports a release whose workloads (or source archive) are not
// ready yet, and when to look again.
func (r *ArmadaChartReconciler) waiting(obj, base *armadav1.ArmadaChart, o operatorkit.Outcome, scrub scrubber) ctrl.Result {
	after := o.After
	if after == 0 {
		after = r.PollInterval
	}
	st := &obj.Status
	if o.Reason == ReasonFetchingSource {
		if stillDeployed(obj, base) {
			// A deployed release whose archive is fetched again (the
			// operator restarted, the cache expired) stays Ready.
			obj.Status = *base.Status.DeepCopy()
			return ctrl.Result{RequeueAfter: after}
		}
		if st.State != armadav1.StateDeployed && st.State != armadav1.StateFailed {
			st.State = armadav1.StatePending
		}
	}
	st.Satisfied = false
	conditions(obj).SetOutcome(o, "", "", scrub.clean, "")
	return ctrl.Result{RequeueAfter: after}
}

// stillDeployed reports whether base, the chart as the pass read it, was
// Ready for the generation and target state obj has.
func stillDeployed(obj, base *armadav1.ArmadaChart) bool {
	return apimeta.IsStatusConditionTrue(base.Status.Conditions, armadav1.ReadyCondition) &&
		base.Status.ObservedGeneration == obj.Generation && base.Status.TargetState == obj.Status.TargetState
}

// stalled reports a chart that needs a spec change. It is not requeued: a
// new spec, or a change to an object it reads, brings it back.
func (r *ArmadaChartReconciler) stalled(ctx context.Context, obj, base *armadav1.ArmadaChart, o operatorkit.Outcome, scrub scrubber) {
	st := &obj.Status
	st.Satisfied = false
	if o.Reason != ReasonProtected {
		st.State = armadav1.StateError
	}
	conditions(obj).SetOutcome(o, "", "", scrub.clean, "")
	msg := scrub.clean(o.Message)
	r.events().OnTransition(base.Status.State != armadav1.StateError || operatorkit.ConditionChanged(base.Status.Conditions, st.Conditions, armadav1.StalledCondition),
		obj, corev1.EventTypeWarning, o.Reason, "Stall", msg)
	ctrl.LoggerFrom(ctx).Info("stalled: needs a spec change", "reason", o.Reason, "message", msg)
}

// failed counts a failure and retries after the backoff the count gives.
// The retry is remembered too, so events of the release's own workloads do
// not start the next attempt earlier.
func (r *ArmadaChartReconciler) failed(ctx context.Context, obj *armadav1.ArmadaChart, o operatorkit.Outcome, scrub scrubber) ctrl.Result {
	st := &obj.Status
	st.Satisfied = false
	st.Failures++
	msg := scrub.clean(o.Message)
	delay := operatorkit.Backoff{Base: r.RetryInterval, Max: r.MaxRetryInterval}.Delay(st.Failures)
	conditions(obj).SetOutcome(o, "", "", scrub.clean, fmt.Sprintf("retrying in %s after failure %d", delay, st.Failures))
	ctrl.LoggerFrom(ctx).Error(errors.New(msg), "reconcile failed", "failures", st.Failures, "retryIn", delay)
	r.setRetry(client.ObjectKeyFromObject(obj), obj.Generation, st.TargetState, delay)
	return ctrl.Result{RequeueAfter: delay}
}

// fetching is the outcome of a pass whose chart (or dependency) archive is
// being fetched in the background: waiting, with reason FetchingSource. The
// fetch enqueues the chart when it ends; the requeue is only a safety net.
func (r *ArmadaChartReconciler) fetching(err error) error {
	return &operatorkit.WaitingError{Reason: ReasonFetchingSource, Message: err.Error(), After: r.Loader.Fetcher.Timeout() + r.PollInterval}
}

// events records the reconciler's events.
func (r *ArmadaChartReconciler) events() operatorkit.Events {
	return operatorkit.Events{Recorder: r.Recorder}
}

// reconcileDelete uninstalls the release, bounded by delete.timeout, and
// then lets the object go.
func (r *ArmadaChartReconciler) reconcileDelete(ctx context.Context, obj *armadav1.ArmadaChart) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return ctrl.Result{}, nil
	}
	name := ReleaseName(obj)
	if err := r.Helm.Uninstall(obj.Spec.Namespace, name, deleteTimeout(obj)); err != nil {
		r.events().Record(obj, corev1.EventTypeWarning, ReasonUninstallFailed, "Uninstall", err.Error())
		return ctrl.Result{}, fmt.Errorf("ArmadaChart %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	r.events().Record(obj, corev1.EventTypeNormal, ReasonUninstalled, "Uninstall", fmt.Sprintf("release %s/%s uninstalled", obj.Spec.Namespace, name))
	r.setApplied(client.ObjectKeyFromObject(obj), nil)
	return ctrl.Result{}, operatorkit.RemoveFinalizer(ctx, r.Client, obj, Finalizer)
}

func seconds(v, def int64) time.Duration {
	if v <= 0 {
		v = def
	}
	return time.Duration(v) * time.Second
}

func deleteTimeout(c *armadav1.ArmadaChart) time.Duration {
	var v int64
	if c.Spec.Delete != nil {
		v = c.Spec.Delete.Timeout
	}
	return seconds(v, armadav1.DefaultDeleteTimeoutSeconds)
}

func waitTimeout(c *armadav1.ArmadaChart) time.Duration {
	var v int64
	if c.Spec.Wait != nil {
		v = c.Spec.Wait.Timeout
	}
	return seconds(v, armadav1.DefaultWaitTimeoutSeconds)
}

func testTimeout(c *armadav1.ArmadaChart) time.Duration {
	var v int64
	if c.Spec.Test != nil {
		v = c.Spec.Test.Timeout
	}
	return seconds(v, armadav1.DefaultTestTimeoutSeconds)
}

// reconcileUninstalled removes the release but keeps the object.
func (r *ArmadaChartReconciler) reconcileUninstalled(ctx context.Context, obj *armadav1.ArmadaChart) error {
	last, err := r.Helm.Last(obj.Spec.Namespace, obj.Status.ReleaseName)
	if err != nil {
		return err
	}
	if last != nil {
		if err := r.Helm.Uninstall(obj.Spec.Namespace, obj.Status.ReleaseName, deleteTimeout(obj)); err != nil {
			return err
		}
		r.events().Record(obj, corev1.EventTypeNormal, ReasonUninstalled, "Uninstall", fmt.Sprintf("release %s/%s uninstalled (target_state uninstalled)", obj.Spec.Namespace, obj.Status.ReleaseName))
	}
	r.setApplied(client.ObjectKeyFromObject(obj), nil)
	obj.Status.State = armadav1.StateUninstalled
	obj.Status.HelmRevision = 0
	obj.Status.HelmStatus = ""
	obj.Status.WaitCompleted = false
	obj.Status.Tested = false
	return nil
}

// reader returns the uncached reader when there is one.
func reader(api client.Reader, c client.Client) client.Reader {
	if api != nil {
		return api
	}
	return c
}
