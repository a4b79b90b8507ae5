package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/statusreaders"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/kstatus/watcher"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
)

// Event is one progress report.
type Event struct {
	// Type is Apply, Prune, Wait, Ready or Done.
	Type    string
	Message string
}

// Options configure one apply.
type Options struct {
	// Inventory names the phase's inventory.
	Inventory string
	// Policy is strict (default), adopt or force-adopt.
	Policy v1.InventoryPolicy
	// Prune deletes objects of the inventory the bundle no longer has.
	Prune bool
	// DryRun asks the server what would change and changes nothing.
	DryRun bool
	// WaitTimeout bounds the wait; 0 does not wait.
	WaitTimeout time.Duration
	// PollInterval between checks that CRDs and Namespaces are established
	// (default 1s); readiness of the rest is watched, not polled.
	PollInterval time.Duration
	// Conditions are extra JSONPath readiness checks.
	Conditions []v1.Condition
	// WebhookWait bounds how long an object whose admission webhook does
	// not answer yet is applied again (default WaitTimeout, at least a
	// minute).
	WebhookWait time.Duration
	// Concurrency bounds parallel requests (default 8).
	Concurrency int
	// Progress receives events; nil discards.
	Progress func(Event)
}

// Change is what happened (or would happen) to one object.
type Change struct {
	Object string `json:"object"`
	Action string `json:"action"`
}

// Result summarises an apply.
type Result struct {
	Changes []Change `json:"changes"`
	Pruned  []string `json:"pruned,omitempty"`
	// Moved are the bundle's objects left alone because their namespace
	// was moved, or is being moved, to another cluster (MovedToAnnotation,
	// MovingToAnnotation).
	Moved []string `json:"moved,omitempty"`
	// NotSent counts the Changes "unchanged" because the inventory's
	// records show them so, without a request.
	NotSent int  `json:"notSent,omitempty"`
	Ready   bool `json:"ready"`
	DryRun  bool `json:"dryRun,omitempty"`
}

// Count returns how many changes had the action.
func (r *Result) Count(action string) int {
	n := 0
	for _, c := range r.Changes {
		if c.Action == action {
			n++
		}
	}
	return n
}

// Applier applies bundles to one cluster.
type Applier struct {
	client  client.Client
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	rm      *ssa.ResourceManager
}

// New returns an applier for the cluster cfg reaches. Client-side
// throttling is lifted: the API server's own priority and fairness decides.
func New(cfg *rest.Config) (*Applier, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, -1
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	c, err := client.New(cfg, client.Options{Mapper: mapper})
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	poller := polling.NewStatusPoller(c, mapper, polling.Options{})
	rm := ssa.NewResourceManager(c, poller, ssa.Owner{Field: FieldManager, Group: OwnerGroup})
	return &Applier{client: c, dynamic: dyn, mapper: mapper, rm: rm}, nil
}

// Client returns the applier's client.
func (a *Applier) Client() client.Client { return a.client }

func (o *Options) emit(t, format string, args ...any) {
	if o.Progress != nil {
		o.Progress(Event{Type: t, Message: fmt.Sprintf(format, args...)})
	}
}

// Apply applies objects as the inventory named in opts: it checks the
// bundle, records it in the inventory, applies it (or, in a dry run, says
// what would change), prunes what the inventory held but the bundle no
// longer does, and waits for readiness.
func (a *Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured, opts Options) (*Result, error) {
	if opts.Inventory == "" {
		return nil, errors.New("apply: an inventory name is required")
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	a.rm.SetConcurrency(opts.Concurrency)
	p, err := a.prepare(ctx, objs, opts)
	if err != nil {
		return nil, err
	}
	objs = p.objs
	res := &Result{DryRun: opts.DryRun, Moved: p.gone}

	if opts.DryRun {
		if err := a.dryRun(ctx, objs, p.stale, opts, res); err != nil {
			return nil, err
		}
		return res, nil
	}

	// Record the union first: if this run dies half-way, the next one still
	// knows every object it may have created. The records of the last
	// apply stay: one this run changes no longer matches its hash.
	all := union(p.inv.Objects, p.desired)
	if err := WriteInventory(ctx, a.client, &Inventory{Name: opts.Inventory, Objects: all, Applied: keepApplied(p.inv.Applied, all)}); err != nil {
		return nil, err
	}
	send, skipped := p.split()
	res.NotSent = len(skipped)
	for _, o := range skipped {
		res.Changes = append(res.Changes, Change{Object: RefOf(o).String(), Action: string(ssa.UnchangedAction)})
	}
	if len(skipped) > 0 {
		opts.emit("Apply", "applying %d objects (%d more unchanged since the last apply, not sent)", len(send), len(skipped))
	} else {
		opts.emit("Apply", "applying %d objects", len(send))
	}
	applied := keepApplied(p.inv.Applied, p.desired)
	if err := a.applyStaged(ctx, send, p, applied, opts, res); err != nil {
		return res, err
	}
	opts.emit("Apply", "%d objects applied: %d created, %d configured, %d unchanged",
		len(res.Changes), res.Count("created"), res.Count("configured"), res.Count("unchanged"))

	final := p.desired
	if opts.Prune && len(p.stale) > 0 {
		if err := a.prune(ctx, p.stale, opts, res); err != nil {
			return res, err
		}
	} else if !opts.Prune {
		// Without pruning, objects left out of the bundle stay ours.
		final = union(p.stale, p.desired)
	}
	if err := WriteInventory(ctx, a.client, &Inventory{Name: opts.Inventory, Objects: final, Applied: keepApplied(applied, final)}); err != nil {
		return res, err
	}

	if opts.WaitTimeout > 0 && len(objs) == 0 {
		// Everything was left alone (moved or being moved): nothing here
		// to wait on.
		res.Ready = true
	} else if opts.WaitTimeout > 0 {
		opts.emit("Wait", "waiting up to %s for %d objects to be ready", opts.WaitTimeout, len(objs))
		if err := a.wait(ctx, objs, opts); err != nil {
			return res, err
		}
		res.Ready = true
		opts.emit("Ready", "all %d objects are ready", len(objs))
	}
	return res, nil
}

// prepared is the bundle as Apply works it out before it changes anything.
type prepared struct {
	inv *Inventory
	// desired are the bundle's objects, moved ones too; stale are those the
	// inventory holds and the bundle no longer does.
	desired, stale []ObjRef
	// objs are the objects to apply: the bundle less the moved ones,
	// normalized and labelled with the inventory.
	objs []*unstructured.Unstructured
	// live holds the metadata of every object that exists already.
	live map[string]liveMeta
	// hashes are the objs' applied hashes (appliedHash), by ObjRef.Key.
	hashes map[string]string
	// gone are the objects left alone because their namespace moved.
	gone []string
}

// prepare checks the bundle against itself and the cluster (duplicates,
// ownership) and works out what to apply and what is stale.
func (a *Applier) prepare(ctx context.Context, objs []*unstructured.Unstructured, opts Options) (*prepared, error) {
	if err := checkDuplicates(objs); err != nil {
		return nil, err
	}
	inv, _, err := ReadInventory(ctx, a.client, opts.Inventory)
	if err != nil {
		return nil, err
	}
	// The inventory keeps the objects of moved namespaces (they are still
	// the bundle's, so never pruned); nothing else touches them here.
	p := &prepared{inv: inv, desired: make([]ObjRef, len(objs))}
	for i, o := range objs {
		p.desired[i] = RefOf(o)
	}
	p.stale = staleRefs(inv.Objects, p.desired)
	var moved map[string]NamespaceMove
	p.objs, moved, p.gone, err = a.splitMoved(ctx, objs)
	if err != nil {
		return nil, err
	}
	if p.live, err = a.checkOwnership(ctx, p.objs, opts); err != nil {
		return nil, err
	}
	if err := normalize.UnstructuredList(p.objs); err != nil {
		return nil, fmt.Errorf("normalizing objects: %w", err)
	}
	a.rm.SetOwnerLabels(p.objs, opts.Inventory, InventoryNamespace)
	p.hashes = make(map[string]string, len(p.objs))
	for _, o := range p.objs {
		if p.hashes[RefOf(o).Key()], err = appliedHash(o); err != nil {
			return nil, err
		}
	}
	if len(p.gone) > 0 {
		opts.emit("Moved", "%s", movedMessage(moved, len(p.gone)))
	}
	return p, nil
}

// split is the objects to send, and those the inventory's records show
// unchanged since the last apply.
func (p *prepared) split() (send, skipped []*unstructured.Unstructured) {
	for _, o := range p.objs {
		key := RefOf(o).Key()
		rec, recorded := p.inv.Applied[key]
		live, exists := p.live[key]
		if recorded && exists && rec.unchanged(o, p.hashes[key], live) {
			skipped = append(skipped, o)
			continue
		}
		send = append(send, o)
	}
	return send, skipped
}

// checkDuplicates refuses a bundle that holds an object twice: which copy
// would win is not something to leave to the order of the bundle.
func checkDuplicates(objs []*unstructured.Unstructured) error {
	seen := map[string]bool{}
	var dups []string
	for _, o := range objs {
		k := RefOf(o).Key()
		if seen[k] {
			dups = append(dups, RefOf(o).String())
		}
		seen[k] = true
	}
	if len(dups) > 0 {
		return fmt.Errorf("the bundle holds these objects more than once: %s", strings.Join(dups, ", "))
	}
	return nil
}

// dryRun fills res with what applying objs would change, and what pruning
// would delete, changing nothing.
func (a *Applier) dryRun(ctx context.Context, objs []*unstructured.Unstructured, stale []ObjRef, opts Options, res *Result) error {
	for _, o := range objs {
		entry, _, _, err := a.rm.Diff(ctx, o, ssa.DiffOptions{})
		if err != nil {
			// A kind whose CRD is created by this same bundle is not known yet.
			// So is a namespace the bundle creates.
			if isNoMatch(err) || apierrors.IsNotFound(err) || strings.Contains(err.Error(), "not found") {
				res.Changes = append(res.Changes, Change{Object: RefOf(o).String(), Action: "created"})
				continue
			}
			return fmt.Errorf("dry run of %s: %w", RefOf(o), err)
		}
		res.Changes = append(res.Changes, Change{Object: RefOf(o).String(), Action: string(entry.Action)})
	}
	if opts.Prune {
		for _, r := range stale {
			res.Pruned = append(res.Pruned, r.String())
		}
	}
	return nil
}

// prune deletes the stale objects that still carry the inventory's owner
// labels (an object another inventory took over is left alone) and records
// them in res.
func (a *Applier) prune(ctx context.Context, stale []ObjRef, opts Options, res *Result) error {
	var del []*unstructured.Unstructured
	for _, r := range stale {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(r.GVK())
		u.SetNamespace(r.Namespace)
		u.SetName(r.Name)
		del = append(del, u)
	}
	dcs, err := a.rm.DeleteAll(ctx, del, ssa.DeleteOptions{
		PropagationPolicy: "Background",
		Inclusions:        a.rm.GetOwnerLabels(opts.Inventory, InventoryNamespace),
	})
	if dcs != nil {
		for _, e := range dcs.Entries {
			if e.Action == ssa.DeletedAction {
				res.Pruned = append(res.Pruned, e.Subject)
			}
		}
	}
	// A kind whose CRD is already gone has nothing left to prune.
	if err != nil && !isNoMatch(err) {
		return fmt.Errorf("pruning: %w", err)
	}
	opts.emit("Prune", "%d objects pruned", len(res.Pruned))
	return nil
}

// applyStaged applies CRDs and Namespaces first and waits until they are
// established, forgets the cached API discovery (so kinds those CRDs add
// are known), then applies the rest with bounded parallelism. p.live holds
// the metadata of every object that existed before the run; what each
// apply left is recorded in applied.
func (a *Applier) applyStaged(ctx context.Context, objs []*unstructured.Unstructured, p *prepared, applied map[string]AppliedState, opts Options, res *Result) error {
	var first, rest []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GroupVersionKind().GroupKind().String() {
		case "CustomResourceDefinition.apiextensions.k8s.io", "Namespace":
			first = append(first, o)
		default:
			rest = append(rest, o)
		}
	}
	record := func(cs *ssa.ChangeSet) {
		if cs == nil {
			return
		}
		for _, e := range cs.Entries {
			res.Changes = append(res.Changes, Change{Object: e.Subject, Action: string(e.Action)})
		}
	}
	if len(first) > 0 {
		cs, err := a.rm.ApplyAll(ctx, first, ssa.ApplyOptions{})
		record(cs)
		if err != nil {
			return fmt.Errorf("applying CRDs and namespaces: %w", err)
		}
		if err := a.rm.WaitForSetWithContext(ctx, cs.ToObjMetadataSet(), ssa.WaitOptions{Interval: opts.PollInterval, Timeout: max(opts.WaitTimeout, time.Minute)}); err != nil {
			return fmt.Errorf("waiting for CRDs and namespaces: %w", err)
		}
		if r, ok := a.mapper.(interface{ Reset() }); ok {
			r.Reset()
		}
		// As they are now, established: one LIST of each kind.
		now, err := a.readLive(ctx, first, opts.Concurrency)
		if err != nil {
			return err
		}
		for _, o := range first {
			key := RefOf(o).Key()
			if l, ok := now[key]; ok {
				applied[key] = AppliedState{Hash: p.hashes[key], UID: l.uid, ResourceVersion: l.resourceVersion, Generation: l.generation}
			}
		}
	}
	if len(rest) > 0 {
		changes, states, err := a.applyAll(ctx, rest, p, opts)
		res.Changes = append(res.Changes, changes...)
		maps.Copy(applied, states)
		if err != nil {
			return fmt.Errorf("applying: %w", err)
		}
	}
	return nil
}

// applyAll server-side applies objs with one request each, at most
// concurrency at a time, and tells created, configured and unchanged apart
// by what existed before (live) and whether the resourceVersion moved (the
// API server does not write an apply that changes nothing). ssa's ApplyAll
// reads and dry-runs every object first: three requests where one does.
// Every object is attempted; the errors are joined.
//
// An object whose admission webhook cannot be reached yet (its provider was
// installed a moment ago and its server is starting, as after `clusterctl
// init`) is applied again until WebhookWait (default: WaitTimeout, at least
// a minute) has passed; every other error fails at once.
func (a *Applier) applyAll(ctx context.Context, objs []*unstructured.Unstructured, p *prepared, opts Options) ([]Change, map[string]AppliedState, error) {
	changes := make([]Change, len(objs))
	states := make([]AppliedState, len(objs))
	errs := make([]error, len(objs))
	sem := make(chan struct{}, opts.Concurrency)
	webhookWait := opts.WebhookWait
	if webhookWait == 0 {
		webhookWait = max(opts.WaitTimeout, time.Minute)
	}
	var once sync.Once
	var wg sync.WaitGroup
	for i, o := range objs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ref := RefOf(o)
			obj := o.DeepCopy()
			// obj comes from a document, not from a typed object, so an
			// absent field is one the document leaves out; the response is
			// decoded back into obj.
			err := a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldManager), client.ForceOwnership)
			if err != nil && IsWebhookUnavailable(err) {
				once.Do(func() {
					opts.emit("Apply", "%s: its admission webhook does not answer yet; trying again for up to %s", ref, webhookWait)
				})
				err = retryWhile(ctx, err, webhookWait, IsWebhookUnavailable, func() error {
					obj = o.DeepCopy()
					return a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldManager), client.ForceOwnership)
				})
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", ref, err)
				return
			}
			before, existed := p.live[ref.Key()]
			action := ssa.UnchangedAction
			switch {
			case !existed:
				action = ssa.CreatedAction
			case obj.GetResourceVersion() != before.resourceVersion:
				action = ssa.ConfiguredAction
			}
			changes[i] = Change{Object: ref.String(), Action: string(action)}
			states[i] = stateOf(obj, p.hashes[ref.Key()])
		}()
	}
	wg.Wait()
	var done []Change
	recorded := map[string]AppliedState{}
	for i, c := range changes {
		if errs[i] == nil {
			done = append(done, c)
			recorded[RefOf(objs[i]).Key()] = states[i]
		}
	}
	return done, recorded, errors.Join(errs...)
}

// IsWebhookUnavailable reports whether the API server refused a request
// because it could not reach an admission or conversion webhook (no
// endpoints, connection refused, timeout), which clears once the webhook's
// server runs; a webhook that answers and denies is not unavailable.
func IsWebhookUnavailable(err error) bool {
	if err == nil || !apierrors.IsInternalError(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "failed calling webhook") || strings.Contains(msg, "conversion webhook")
}

// retryWhile calls f every second until it succeeds, fails with an error
// transient does not accept, ctx ends or limit has passed; it returns f's
// last error (first is the error that started the retries), with ctx's
// when ctx ended first.
func retryWhile(ctx context.Context, first error, limit time.Duration, transient func(error) bool, f func() error) error {
	deadline := time.Now().Add(limit)
	last := first
	for {
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last: %w)", ctx.Err(), last)
		case <-t.C:
		}
		err := f()
		last = err
		if err == nil || !transient(err) || time.Now().After(deadline) {
			return err
		}
	}
}

func isNoMatch(err error) bool {
	return meta.IsNoMatchError(err) || strings.Contains(err.Error(), "no matches for kind")
}

func staleRefs(old, desired []ObjRef) []ObjRef {
	want := map[string]bool{}
	for _, r := range desired {
		want[r.Key()] = true
	}
	var out []ObjRef
	for _, r := range old {
		if !want[r.Key()] {
			out = append(out, r)
		}
	}
	return out
}

// checkOwnership applies the inventory policy to objects that already
// exist, and reports every conflict at once before anything changes. It
// returns the metadata of every object that exists, by ObjRef key, read
// with one LIST per kind and namespace (readLive).
func (a *Applier) checkOwnership(ctx context.Context, objs []*unstructured.Unstructured, opts Options) (map[string]liveMeta, error) {
	policy := opts.Policy
	if policy == "" {
		policy = v1.InventoryPolicyStrict
	}
	live, err := a.readLive(ctx, objs, opts.Concurrency)
	if err != nil {
		return nil, err
	}
	var conflicts []string
	for _, o := range objs {
		cur, ok := live[RefOf(o).Key()]
		if !ok {
			continue
		}
		owner := cur.labels[OwnerGroup+"/name"]
		switch {
		case owner == opts.Inventory, policy == v1.InventoryPolicyForceAdopt:
		case owner == "" && policy == v1.InventoryPolicyStrict:
			conflicts = append(conflicts, fmt.Sprintf("%s exists and belongs to no inventory (inventoryPolicy strict; adopt takes it over)", RefOf(o)))
		case owner != "":
			conflicts = append(conflicts, fmt.Sprintf("%s belongs to inventory %q (inventoryPolicy %s; force-adopt takes it over)", RefOf(o), owner, policy))
		}
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return nil, fmt.Errorf("nothing applied: %d objects conflict with inventory %q:\n  - %s", len(conflicts), opts.Inventory, strings.Join(conflicts, "\n  - "))
	}
	return live, nil
}

const notObserved = "not observed yet"

// wait blocks until every object is Current (kstatus) and every custom
// condition holds, or the timeout ends with the list of what is not ready
// and why. It watches (one informer per kind and namespace) rather than
// polling each object, so readiness is seen as soon as the server reports it.
func (a *Applier) wait(ctx context.Context, objs []*unstructured.Unstructured, opts Options) error {
	ctx, cancel := context.WithTimeout(ctx, opts.WaitTimeout)
	defer cancel()
	ids := make(object.ObjMetadataSet, 0, len(objs))
	names := map[object.ObjMetadata]string{}
	pending := map[object.ObjMetadata]string{}
	for _, o := range objs {
		id := object.ObjMetadata{Namespace: o.GetNamespace(), Name: o.GetName(), GroupKind: o.GroupVersionKind().GroupKind()}
		ids = append(ids, id)
		names[id] = RefOf(o).String()
		pending[id] = notObserved
	}
	w := watcher.NewDefaultStatusWatcher(a.dynamic, a.mapper)
	// The default readers of Deployments, ReplicaSets and StatefulSets LIST
	// the generated ReplicaSets and Pods from the API server on every event,
	// only to attach them to the event; the status itself is computed from
	// the object alone. With hundreds of Deployments those LISTs pile up
	// on the API server and readiness is noticed seconds late.
	w.StatusReader = statusreaders.NewGenericStatusReader(a.mapper, status.Compute)
	events := w.Watch(ctx, ids, watcher.Options{})
	reported := -1
	for {
		select {
		case <-ctx.Done():
			return a.timeoutError(opts, objs, pending)
		case ev, ok := <-events:
			if !ok {
				return a.timeoutError(opts, objs, pending)
			}
			switch ev.Type {
			case event.ErrorEvent:
				return fmt.Errorf("watching objects: %w", ev.Error)
			case event.ResourceUpdateEvent:
				rs := ev.Resource
				if rs == nil {
					continue
				}
				if _, tracked := pending[rs.Identifier]; !tracked && names[rs.Identifier] == "" {
					continue
				}
				why := ""
				switch {
				case rs.Error != nil:
					why = rs.Error.Error()
				case rs.Status == status.NotFoundStatus:
					why = "not found"
				case rs.Status != status.CurrentStatus:
					why = fmt.Sprintf("%s: %s", rs.Status, rs.Message)
				case rs.Resource != nil:
					why = checkConditions(rs.Resource, opts.Conditions)
				}
				_, wasPending := pending[rs.Identifier]
				if why == "" {
					delete(pending, rs.Identifier)
				} else {
					pending[rs.Identifier] = why
				}
				if len(pending) != reported {
					// A count that goes down says which object is no
					// longer ready and why (a controller reported a new
					// condition, a chart was enabled), so that it does
					// not read as a failure.
					back := ""
					if !wasPending && why != "" && reported >= 0 {
						back = fmt.Sprintf(" (%s is no longer ready: %s)", names[rs.Identifier], why)
					}
					reported = len(pending)
					opts.emit("Wait", "%d of %d objects ready%s", len(objs)-len(pending), len(objs), back)
				}
				if len(pending) == 0 {
					return nil
				}
			}
		}
	}
}

// timeoutError lists what is not ready. Objects the watch has not reported
// yet (it may lag on a busy machine) are read once more directly, so the
// reason given is the object's real state.
func (a *Applier) timeoutError(opts Options, objs []*unstructured.Unstructured, pending map[object.ObjMetadata]string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const maxRecheck = 50
	rechecked := 0
	lines := make([]string, 0, len(pending))
	for _, o := range objs {
		id := object.ObjMetadata{Namespace: o.GetNamespace(), Name: o.GetName(), GroupKind: o.GroupVersionKind().GroupKind()}
		why, ok := pending[id]
		if !ok {
			continue
		}
		if why == notObserved && rechecked < maxRecheck {
			rechecked++
			if now := a.readiness(ctx, o, opts.Conditions); now != "" {
				why = now
			}
		}
		lines = append(lines, RefOf(o).String()+": "+why)
	}
	sort.Strings(lines)
	return fmt.Errorf("timed out after %s waiting for %d objects:\n  - %s", opts.WaitTimeout, len(lines), strings.Join(lines, "\n  - "))
}

// readiness reads an object and returns "" when it is ready, else why not.
func (a *Applier) readiness(ctx context.Context, o *unstructured.Unstructured, conds []v1.Condition) string {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.GroupVersionKind())
	if err := a.client.Get(ctx, client.ObjectKeyFromObject(o), live); err != nil {
		if apierrors.IsNotFound(err) {
			return "not found"
		}
		return err.Error()
	}
	st, err := status.Compute(live)
	if err != nil {
		return fmt.Sprintf("status unknown: %v", err)
	}
	if st.Status != status.CurrentStatus {
		return fmt.Sprintf("%s: %s", st.Status, st.Message)
	}
	return checkConditions(live, conds)
}

// checkConditions returns "" when the live object meets every condition
// that applies to its kind, else why not.
func checkConditions(live *unstructured.Unstructured, conds []v1.Condition) string {
	for _, c := range conds {
		if c.Kind != live.GetKind() || (c.APIVersion != "" && c.APIVersion != live.GetAPIVersion()) {
			continue
		}
		jp := jsonpath.New("condition").AllowMissingKeys(true)
		if err := jp.Parse(c.JSONPath); err != nil {
			return fmt.Sprintf("condition %s: %v", c.JSONPath, err)
		}
		results, err := jp.FindResults(live.Object)
		if err != nil || len(results) == 0 || len(results[0]) == 0 {
			return fmt.Sprintf("condition %s not met yet", c.JSONPath)
		}
		if c.Value != "" {
			got := fmt.Sprint(results[0][0].Interface())
			if got != c.Value {
				return fmt.Sprintf("condition %s is %q, want %q", c.JSONPath, got, c.Value)
			}
		}
	}
	return ""
}

// ObjectState is the live state of one inventory object.
type ObjectState struct {
	Object  string `json:"object"`
	Applied bool   `json:"applied"`
	Ready   bool   `json:"ready"`
	Drifted bool   `json:"drifted"`
	Message string `json:"message,omitempty"`
	// Diff says where a drifted object differs (Drift).
	Diff []string `json:"diff,omitempty"`
}

// Status compares the inventory, the live objects and the desired objects.
// An object is drifted when a server-side dry run of the desired object
// would change the live one.
func (a *Applier) Status(ctx context.Context, inventory string, desired []*unstructured.Unstructured) ([]ObjectState, bool, error) {
	inv, found, err := ReadInventory(ctx, a.client, inventory)
	if err != nil {
		return nil, false, err
	}
	want := map[string]*unstructured.Unstructured{}
	for _, o := range desired {
		want[RefOf(o).Key()] = o
	}
	if err := normalize.UnstructuredList(desired); err != nil {
		return nil, false, fmt.Errorf("normalizing objects: %w", err)
	}
	a.rm.SetOwnerLabels(desired, inventory, InventoryNamespace)
	desiredRefs := make([]ObjRef, len(desired))
	for i, o := range desired {
		desiredRefs[i] = RefOf(o)
	}
	refs := union(inv.Objects, desiredRefs)
	var nss []string
	for _, r := range refs {
		nss = append(nss, r.Namespace)
	}
	moved, err := MovedNamespaces(ctx, a.client, nss)
	if err != nil {
		return nil, found, err
	}
	var out []ObjectState
	for _, r := range refs {
		s := ObjectState{Object: r.String()}
		if m, ok := moved[r.Namespace]; ok {
			// Another cluster manages it now (its state is there), or will
			// once the move is finished: not ready until then.
			s.Applied, s.Ready = true, !m.Moving
			s.Message = m.String() + " with its namespace"
			if m.Moving {
				s.Message = fmt.Sprintf("left alone: its namespace is %s", m)
			}
			out = append(out, s)
			continue
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(r.GVK())
		err := a.client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, live)
		switch {
		case err == nil:
			s.Applied = true
			if st, err := status.Compute(live); err == nil {
				s.Ready = st.Status == status.CurrentStatus
				if !s.Ready {
					s.Message = fmt.Sprintf("%s: %s", st.Status, st.Message)
				}
			}
		case apierrors.IsNotFound(err) || isNoMatch(err):
			s.Message = "not in the cluster"
		default:
			return nil, found, fmt.Errorf("reading %s: %w", r, err)
		}
		d, inBundle := want[r.Key()]
		switch {
		case !inBundle:
			s.Message = strings.TrimPrefix(s.Message+"; no longer in the bundle (pruned on the next run with prune)", "; ")
		case s.Applied:
			entry, live, merged, err := a.rm.Diff(ctx, d, ssa.DiffOptions{})
			if err == nil && entry.Action == ssa.ConfiguredAction {
				s.Drifted = true
				if live != nil && merged != nil {
					s.Diff = Drift(live, merged)
				}
				s.Message = strings.TrimPrefix(s.Message+"; live object differs from the bundle", "; ")
			}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object < out[j].Object })
	return out, found, nil
}
