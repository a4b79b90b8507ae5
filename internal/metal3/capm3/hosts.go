package capm3

import (
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
)

// Host metadata the provider writes.
const (
	// PausedAnnotationValue is the value of the BareMetalHost paused
	// annotation when this provider paused the host.
	PausedAnnotationValue = "metal3.io/capm3"
	// NodeReuseLabel on a released host names the machine set or control
	// plane that may take it back first.
	NodeReuseLabel = "infrastructure.cluster.x-k8s.io/node-reuse"
	// FailureDomainLabel on a host names its failure domain.
	FailureDomainLabel = "infrastructure.cluster.x-k8s.io/failure-domain"
)

// hostSelectorOperators are the operators of a hostSelector expression,
// in lower case: labels.NewRequirement's.
var hostSelectorOperators = []selection.Operator{selection.In, selection.NotIn, selection.Equals, selection.DoubleEquals,
	selection.NotEquals, selection.Exists, selection.DoesNotExist, selection.GreaterThan, selection.LessThan}

// HostSelector builds the label selector of a Metal3Machine's hostSelector.
// Operators are accepted in any case, as upstream does: metav1's In, NotIn
// and Exists are in, notin and exists. metav1's DoesNotExist is not an
// operator here, nor upstream (whose CRD accepts any string and whose
// controller refuses it when choosing a host); "!" is. An operator not
// accepted is refused naming its field
// (spec.hostSelector.matchExpressions[i].operator) and the operator.
func HostSelector(s infrav1.HostSelector) (labels.Selector, error) {
	sel := labels.NewSelector()
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r, err := labels.NewRequirement(k, selection.Equals, []string{s.MatchLabels[k]})
		if err != nil {
			return nil, fmt.Errorf("spec.hostSelector.matchLabels[%s]: %w", k, err)
		}
		sel = sel.Add(*r)
	}
	for i, e := range s.MatchExpressions {
		op := selection.Operator(strings.ToLower(string(e.Operator)))
		if !slices.Contains(hostSelectorOperators, op) {
			hint := ""
			if op == "doesnotexist" {
				hint = `; a label's absence is "!"`
			}
			return nil, fmt.Errorf("spec.hostSelector.matchExpressions[%d].operator: %q is not one of in, notin, =, ==, !=, exists, !, gt, lt (in any case)%s", i, e.Operator, hint)
		}
		r, err := labels.NewRequirement(e.Key, op, e.Values)
		if err != nil {
			return nil, fmt.Errorf("spec.hostSelector.matchExpressions[%d]: %w", i, err)
		}
		sel = sel.Add(*r)
	}
	return sel, nil
}

// consumedBy reports whether ref names the Metal3Machine m.
func consumedBy(ref *corev1.ObjectReference, m *infrav1.Metal3Machine) bool {
	if ref == nil || ref.Name != m.Name || ref.Kind != "Metal3Machine" {
		return false
	}
	if ref.Namespace != "" && ref.Namespace != m.Namespace {
		return false
	}
	gv := strings.SplitN(ref.APIVersion, "/", 2)
	return gv[0] == infrav1.GroupVersion.Group
}

// consumerRef is the reference a claimed host carries.
func consumerRef(m *infrav1.Metal3Machine) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		APIVersion: infrav1.GroupVersion.String(),
		Kind:       "Metal3Machine",
		Namespace:  m.Namespace,
		Name:       m.Name,
	}
}

// reuseConsumer is the consumerRef a host released for node reuse keeps:
// its Cluster.
func reuseConsumer(cluster types.NamespacedName) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		APIVersion: clusterv1.GroupVersion.String(),
		Kind:       "Cluster",
		Namespace:  cluster.Namespace,
		Name:       cluster.Name,
	}
}

// choice is the outcome of choosing a host.
type choice struct {
	// Host is the chosen host, nil when none fits.
	Host *metal3v1alpha1.BareMetalHost
	// Reused: the host was released for node reuse to this machine's set.
	Reused bool
	// Again: the host is already this machine's (a claim whose annotation
	// was not yet written).
	Again bool
	// Why explains an empty choice: how many hosts failed which test.
	Why string
}

// chooseRequest is what chooseHost needs to know of the machine.
type chooseRequest struct {
	machine  *infrav1.Metal3Machine
	selector labels.Selector
	// cluster is the machine's Cluster.
	cluster types.NamespacedName
	// reuse is the node-reuse label value this machine may take back
	// (its machine deployment or control plane name), "" without nodeReuse.
	reuse string
	// failureDomain, when set, must match the host's failure-domain label.
	failureDomain string
	// reserved reports hosts another worker of this process is claiming.
	reserved func(types.NamespacedName) bool
}

// chooseHost picks a host for a machine among hosts (one namespace's).
// It prefers, in order: a host already consumed by the machine; a host
// released for reuse to the machine's set; any available host. Among
// equals, the machine's UID picks the starting point, so that machines
// created together spread over the hosts instead of racing for one.
func chooseHost(hosts []metal3v1alpha1.BareMetalHost, req chooseRequest) choice {
	var free, reuse []*metal3v1alpha1.BareMetalHost
	var notMatching, consumed, notAvailable, failed, paused, busy, unhealthy int
	for i := range hosts {
		h := &hosts[i]
		if consumedBy(h.Spec.ConsumerRef, req.machine) {
			return choice{Host: h, Again: true}
		}
		if !req.selector.Matches(labels.Set(h.Labels)) {
			notMatching++
			continue
		}
		if req.failureDomain != "" && h.Labels[FailureDomainLabel] != req.failureDomain {
			notMatching++
			continue
		}
		reusable := false
		if v, ok := h.Labels[NodeReuseLabel]; ok {
			// A host kept for reuse belongs to its set until taken back.
			ref := h.Spec.ConsumerRef
			if req.reuse == "" || v != req.reuse || ref == nil || ref.Kind != "Cluster" || ref.Name != req.cluster.Name {
				consumed++
				continue
			}
			reusable = true
		} else if h.Spec.ConsumerRef != nil {
			consumed++
			continue
		}
		switch {
		case !h.DeletionTimestamp.IsZero():
			notAvailable++
			continue
		case h.Status.ErrorMessage != "" || h.Status.ErrorType != "" || h.Status.OperationalStatus == metal3v1alpha1.OperationalStatusError:
			failed++
			continue
		}
		if markedUnhealthy(h) {
			unhealthy++
			continue
		}
		if _, ok := h.Annotations[metal3v1alpha1.PausedAnnotation]; ok {
			paused++
			continue
		}
		if _, ok := h.Annotations[metal3v1alpha1.DetachedAnnotation]; ok {
			paused++
			continue
		}
		if st := h.Status.Provisioning.State; st != metal3v1alpha1.StateAvailable && st != metal3v1alpha1.StateReady {
			notAvailable++
			continue
		}
		if req.reserved != nil && req.reserved(types.NamespacedName{Namespace: h.Namespace, Name: h.Name}) {
			busy++
			continue
		}
		if reusable {
			reuse = append(reuse, h)
		} else {
			free = append(free, h)
		}
	}
	if len(reuse) > 0 {
		return choice{Host: spread(reuse, req.machine.UID), Reused: true}
	}
	if len(free) > 0 {
		return choice{Host: spread(free, req.machine.UID)}
	}
	return choice{Why: fmt.Sprintf("no available BareMetalHost in namespace %s matches: %d hosts, %d not matching hostSelector, %d consumed, %d not available or ready, %d in error, %d marked unhealthy, %d paused or detached, %d being claimed by other machines",
		req.machine.Namespace, len(hosts), notMatching, consumed, notAvailable, failed, unhealthy, paused, busy)}
}

// markedUnhealthy: remediation gave up on the host (UnhealthyAnnotation,
// or its former name); no machine claims it until it is removed.
func markedUnhealthy(h *metal3v1alpha1.BareMetalHost) bool {
	_, a := h.Annotations[infrav1.UnhealthyAnnotation]
	_, b := h.Annotations[infrav1.UnhealthyAnnotationDeprecated]
	return a || b
}

// spread picks one host of hosts (sorted by name for a stable order) from
// a starting point the machine's UID gives.
func spread(hosts []*metal3v1alpha1.BareMetalHost, uid types.UID) *metal3v1alpha1.BareMetalHost {
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].Name < hosts[j].Name })
	return hosts[int(maphash.String(spreadSeed, string(uid))%uint64(len(hosts)))]
}

// spreadSeed seeds spread's hash, once per process.
var spreadSeed = maphash.MakeSeed()

// reservations are the hosts workers of this process are claiming, until
// the cache shows the claim or reservationTTL passes.
type reservations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]reservation
}

type reservation struct {
	machine types.UID
	at      time.Time
}

const reservationTTL = 30 * time.Second

// reserve takes host for machine unless another machine holds it.
func (r *reservations) reserve(host types.NamespacedName, machine types.UID, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[types.NamespacedName]reservation{}
	}
	if cur, ok := r.m[host]; ok && cur.machine != machine && now.Sub(cur.at) < reservationTTL {
		return false
	}
	r.m[host] = reservation{machine: machine, at: now}
	return true
}

// heldByOther reports whether another machine holds host.
func (r *reservations) heldByOther(host types.NamespacedName, machine types.UID, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, ok := r.m[host]
	return ok && cur.machine != machine && now.Sub(cur.at) < reservationTTL
}

// release drops a reservation (the claim failed, or the cache shows it).
func (r *reservations) release(host types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, host)
}
