package controller

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
	"k8s.io/apimachinery/pkg/api/equality"
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
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/chartsource"
	"github.com/airshipit/airship-go/internal/armada/helm"
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
	toChart := handler.EnqueueRequestsFromMapFunc(r.chartsForObject)
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
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Named("armadachart").
		Complete(r)
}

// chartsForObject maps an object Helm created to the ArmadaCharts whose
// release it belongs to.
func (r *ArmadaChartReconciler) chartsForObject(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetAnnotations()[helmReleaseNameAnnotation]
	ns := o.GetAnnotations()[helmReleaseNamespaceAnnotation]
	if ns == "" {
		ns = o.GetNamespace()
	}
	var list armadav1.ArmadaChartList
	if err := r.Client.List(ctx, &list, client.MatchingFields{releaseKeyIndex: releaseKey(ns, name)}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ArmadaCharts for a release object", "release", name)
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, c := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Name}})
	}
	return out
}

// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadacharts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadacharts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadacharts/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile drives one ArmadaChart: fetch, finalizer, then either delete
// or the deploy steps, with status written once at the end.
func (r *ArmadaChartReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	obj := &armadav1.ArmadaChart{}
	if err := reader(r.APIReader, r.Client).Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.setRetry(req.NamespacedName, 0, "", 0)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !obj.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, obj)
	}

	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		patch := client.MergeFrom(obj.DeepCopy())
		controllerutil.AddFinalizer(obj, Finalizer)
		if err := r.Client.Patch(ctx, obj, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer to ArmadaChart %s/%s: %w", obj.Namespace, obj.Name, err)
		}
	}

	target, terr := chartTarget(obj)
	if d := r.retryPending(req.NamespacedName, obj.Generation, target); d > 0 {
		return ctrl.Result{RequeueAfter: d}, nil
	}

	base := obj.DeepCopy()
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
		res, retErr = r.finish(ctx, obj, base, res, retErr, scrub)
	}()
	if terr != nil {
		return ctrl.Result{}, stall(ReasonInvalidTargetState, fmt.Errorf("ArmadaChart %s/%s: %w", obj.Namespace, obj.Name, terr))
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
		return r.reconcileDeployed(ctx, obj, values)
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
		return nil, stall(ReasonInvalidValues, fmt.Errorf("ArmadaChart %s/%s: spec.values: must be an object", c.Namespace, c.Name))
	}
	if v == nil {
		v = map[string]any{}
	}
	return v, nil
}

// finish writes conditions, counters and observedGeneration from the
// outcome of the steps, patches status, and turns stalled and waiting
// outcomes into results the controller should not retry with backoff.
func (r *ArmadaChartReconciler) finish(ctx context.Context, obj, base *armadav1.ArmadaChart, res ctrl.Result, err error, scrub scrubber) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	st := &obj.Status
	st.ObservedGeneration = obj.Generation
	gen := obj.Generation
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: truncate(msg), ObservedGeneration: gen})
	}
	var waiting *waitingError
	var fetching *fetchingError
	stalled, isStalled := asStalled(err)
	failed := err != nil && !errors.As(err, &waiting) && !errors.As(err, &fetching) && !isStalled
	switch {
	case errors.As(err, &fetching):
		err = nil
		// The fetch notifies the chart; this is only a safety net.
		res = ctrl.Result{RequeueAfter: r.Loader.Fetcher.Timeout() + r.PollInterval}
		if ready := apimeta.FindStatusCondition(base.Status.Conditions, armadav1.ReadyCondition); ready != nil && ready.Status == metav1.ConditionTrue &&
			base.Status.ObservedGeneration == obj.Generation && base.Status.TargetState == st.TargetState {
			// A deployed release whose archive is fetched again (the
			// operator restarted, the cache expired) stays Ready.
			obj.Status = *base.Status.DeepCopy()
			break
		}
		st.Satisfied = false
		if st.State != armadav1.StateDeployed && st.State != armadav1.StateFailed {
			st.State = armadav1.StatePending
		}
		msg := scrub.clean(fetching.Error())
		set(armadav1.ReadyCondition, metav1.ConditionFalse, ReasonFetchingSource, msg)
		set(armadav1.ReconcilingCondition, metav1.ConditionTrue, ReasonFetchingSource, msg)
		apimeta.RemoveStatusCondition(&st.Conditions, armadav1.StalledCondition)
	case err == nil:
		st.Satisfied = string(st.State) == string(st.TargetState)
		st.Failures = 0
		reason, msg := ReasonSucceeded, fmt.Sprintf("release %s is %s", st.ReleaseName, st.State)
		switch st.TargetState {
		case armadav1.TargetStateUninitialized:
			reason, msg = ReasonUninitialized, "target_state is uninitialized; the release is left alone"
		case armadav1.TargetStateUninstalled:
			reason = ReasonUninstalled
		}
		set(armadav1.ReadyCondition, metav1.ConditionTrue, reason, msg)
		apimeta.RemoveStatusCondition(&st.Conditions, armadav1.ReconcilingCondition)
		apimeta.RemoveStatusCondition(&st.Conditions, armadav1.StalledCondition)
		if st.Satisfied && st.TargetState != armadav1.TargetStateUninitialized && (!base.Status.Satisfied || base.Status.State != st.State || base.Status.HelmRevision != st.HelmRevision) {
			r.event(obj, corev1.EventTypeNormal, ReasonSatisfied, "Reconcile", msg)
		}
	case errors.As(err, &waiting):
		st.Satisfied = false
		msg := scrub.clean(waiting.msg)
		set(armadav1.ReadyCondition, metav1.ConditionFalse, ReasonWaiting, msg)
		set(armadav1.ReconcilingCondition, metav1.ConditionTrue, ReasonWaiting, msg)
		apimeta.RemoveStatusCondition(&st.Conditions, armadav1.StalledCondition)
		err = nil
		if res.RequeueAfter == 0 {
			res.RequeueAfter = r.PollInterval
		}
	case isStalled:
		st.Satisfied = false
		if stalled.reason != ReasonProtected {
			st.State = armadav1.StateError
		}
		msg := scrub.clean(stalled.Error())
		set(armadav1.ReadyCondition, metav1.ConditionFalse, stalled.reason, msg)
		set(armadav1.StalledCondition, metav1.ConditionTrue, stalled.reason, msg)
		apimeta.RemoveStatusCondition(&st.Conditions, armadav1.ReconcilingCondition)
		if base.Status.State != armadav1.StateError || !sameCondition(base.Status.Conditions, st.Conditions, armadav1.StalledCondition) {
			r.event(obj, corev1.EventTypeWarning, stalled.reason, "Stall", msg)
		}
		log.Info("stalled: needs a spec change", "reason", stalled.reason, "message", msg)
		err = nil
		res = ctrl.Result{}
	default:
		st.Satisfied = false
		st.Failures++
		msg := scrub.clean(err.Error())
		reason := ReasonFailed
		var re *reasonError
		if errors.As(err, &re) {
			reason = re.reason
		}
		delay := r.retryDelay(st.Failures)
		set(armadav1.ReadyCondition, metav1.ConditionFalse, reason, msg)
		set(armadav1.ReconcilingCondition, metav1.ConditionTrue, reason, fmt.Sprintf("retrying in %s after failure %d", delay, st.Failures))
		apimeta.RemoveStatusCondition(&st.Conditions, armadav1.StalledCondition)
		// The backoff follows status.failures rather than the work queue's
		// own, which every successful poll of a wait would reset. The error
		// is logged here, without values, instead of being returned.
		log.Error(errors.New(msg), "reconcile failed", "failures", st.Failures, "retryIn", delay)
		err = nil
		res = ctrl.Result{RequeueAfter: delay}
		r.setRetry(client.ObjectKeyFromObject(obj), obj.Generation, st.TargetState, delay)
	}
	if !failed {
		r.setRetry(client.ObjectKeyFromObject(obj), obj.Generation, st.TargetState, 0)
	}
	if equality.Semantic.DeepEqual(base.Status, obj.Status) {
		// Most polls of a wait change nothing; a write would only cost the
		// API server a request.
		return res, err
	}
	if perr := r.Client.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); perr != nil && !apierrors.IsNotFound(perr) {
		if apierrors.IsConflict(perr) {
			// Someone wrote the object since it was read: start over from
			// the new version (Helm's records, not this status, are the
			// source of truth for what was done).
			return ctrl.Result{Requeue: true}, nil
		}
		return res, errors.Join(err, fmt.Errorf("patching status of ArmadaChart %s/%s: %w", obj.Namespace, obj.Name, perr))
	}
	return res, err
}

// retryDelay is RetryInterval doubled for each failure after the first,
// capped at MaxRetryInterval.
func (r *ArmadaChartReconciler) retryDelay(failures int64) time.Duration {
	d := r.RetryInterval
	for i := int64(1); i < failures && d < r.MaxRetryInterval; i++ {
		d *= 2
	}
	return min(d, r.MaxRetryInterval)
}

func sameCondition(a, b []metav1.Condition, t string) bool {
	x, y := apimeta.FindStatusCondition(a, t), apimeta.FindStatusCondition(b, t)
	if x == nil || y == nil {
		return x == y
	}
	return x.Status == y.Status && x.Reason == y.Reason && x.Message == y.Message
}

// maxMessage bounds condition messages; the API server rejects over 32768.
const maxMessage = 4096

func truncate(s string) string {
	if len(s) > maxMessage {
		return s[:maxMessage-3] + "..."
	}
	return s
}

func (r *ArmadaChartReconciler) event(obj *armadav1.ArmadaChart, eventType, reason, action, note string) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(obj, nil, eventType, reason, action, "%s", truncate(note))
}

// reconcileDelete uninstalls the release, bounded by delete.timeout, and
// then lets the object go.
func (r *ArmadaChartReconciler) reconcileDelete(ctx context.Context, obj *armadav1.ArmadaChart) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return ctrl.Result{}, nil
	}
	name := ReleaseName(obj)
	if err := r.Helm.Uninstall(obj.Spec.Namespace, name, deleteTimeout(obj)); err != nil {
		r.event(obj, corev1.EventTypeWarning, ReasonUninstallFailed, "Uninstall", err.Error())
		return ctrl.Result{}, fmt.Errorf("ArmadaChart %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	r.event(obj, corev1.EventTypeNormal, ReasonUninstalled, "Uninstall", fmt.Sprintf("release %s/%s uninstalled", obj.Spec.Namespace, name))
	patch := client.MergeFrom(obj.DeepCopy())
	controllerutil.RemoveFinalizer(obj, Finalizer)
	if err := r.Client.Patch(ctx, obj, patch); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("removing finalizer from ArmadaChart %s/%s: %w", obj.Namespace, obj.Name, err))
	}
	return ctrl.Result{}, nil
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
		r.event(obj, corev1.EventTypeNormal, ReasonUninstalled, "Uninstall", fmt.Sprintf("release %s/%s uninstalled (target_state uninstalled)", obj.Spec.Namespace, obj.Status.ReleaseName))
	}
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
