package emulator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/cluster/kwok"
)

// Node metadata the emulator sets.
const (
	// KwokAnnotation (value "fake") hands a Node to kwok, which marks it
	// Ready and keeps it so.
	KwokAnnotation = kwok.NodeAnnotation
	// HostAnnotation names the emulated host a Node belongs to.
	HostAnnotation = "redfish-emulator.airshipit.org/host"
	// PoweredOffReason is the reason of the Ready condition (False) of
	// the Node of a host that was powered off.
	PoweredOffReason = "PoweredOff"
	// PoweredOnReason is the reason of the Ready condition (Unknown) the
	// emulator leaves when a powered-off host boots again, until kwok
	// takes over.
	PoweredOnReason = "PoweredOn"
)

// nodeWorkers is how many Nodes are written at once.
const nodeWorkers = 4

// nodeSyncer brings each host's Node to what the host's state asks for,
// in the cluster the host's Node is in, one host at a time, retrying with
// backoff. It works from the latest state, so a burst of changes ends in
// the last one.
type nodeSyncer struct {
	s      *Server
	q      workqueue.TypedRateLimitingInterface[string]
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	// taken is when each host's Node was last marked not Ready (the
	// emulator took it from kwok, or took it back).
	mu    sync.Mutex
	taken map[string]time.Time
}

func newNodeSyncer(s *Server) *nodeSyncer {
	ctx, cancel := context.WithCancel(context.Background())
	n := &nodeSyncer{
		taken:  map[string]time.Time{},
		s:      s,
		q:      workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 30*time.Second)),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go n.run()
	return n
}

func (n *nodeSyncer) enqueue(host string) { n.q.Add(host) }

func (n *nodeSyncer) stop() {
	n.cancel()
	n.q.ShutDown()
	<-n.done
}

func (n *nodeSyncer) run() {
	defer close(n.done)
	finished := make(chan struct{}, nodeWorkers)
	for range nodeWorkers {
		go func() {
			defer func() { finished <- struct{}{} }()
			for {
				host, quit := n.q.Get()
				if quit {
					return
				}
				if recheck, err := n.sync(host); err != nil {
					if n.ctx.Err() == nil {
						n.s.logger.Printf("%s: Node: %v (retrying)", host, err)
						n.q.AddRateLimited(host)
					}
				} else {
					n.q.Forget(host)
					if recheck {
						n.q.AddAfter(host, kwokSettle)
					}
				}
				n.q.Done(host)
			}
		}()
	}
	for range nodeWorkers {
		<-finished
	}
}

// After taking a Node from kwok the emulator looks at it again every
// kwokSettle for kwokSettleWindow: a status update kwok computed before it
// let the Node go can still land and mark it Ready.
const (
	kwokSettle       = time.Second
	kwokSettleWindow = 30 * time.Second
)

// sync applies a host's wanted Node. recheck asks for another look a
// little later: the Node was marked not Ready lately, which kwok may undo.
func (n *nodeSyncer) sync(hostName string) (recheck bool, err error) {
	h := n.s.byName[hostName]
	n.s.mu.Lock()
	want := h.st.node
	want.labels = maps.Clone(want.labels)
	want.stale = slices.Clone(want.stale)
	n.s.mu.Unlock()
	ctx, cancel := context.WithTimeout(n.ctx, 30*time.Second)
	defer cancel()

	for _, ref := range want.stale {
		c, err := n.client(ref.cluster)
		if err != nil {
			return false, err
		}
		if c == nil {
			continue
		}
		if err := n.delete(ctx, c, ref); err != nil {
			return false, err
		}
	}
	if len(want.stale) > 0 {
		n.s.mu.Lock()
		h.st.node.stale = slices.DeleteFunc(h.st.node.stale, func(r nodeRef) bool { return slices.Contains(want.stale, r) })
		n.s.mu.Unlock()
	}
	if want.state == nodeNone {
		return false, nil
	}
	c, err := n.client(want.cluster)
	if err != nil || c == nil {
		return false, err // no cluster: the boot logged why
	}
	ref := nodeRef{cluster: want.cluster, name: want.name}
	switch want.state {
	case nodeReady:
		return false, n.ready(ctx, c, hostName, want)
	case nodeNotReady:
		changed, err := n.notReady(ctx, c, ref)
		if err != nil {
			return false, err
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		now := time.Now()
		if changed {
			n.taken[hostName] = now
		}
		if t, ok := n.taken[hostName]; ok && now.Sub(t) < kwokSettleWindow {
			return true, nil
		}
		delete(n.taken, hostName)
		return false, nil
	case nodeAbsent:
		return false, n.delete(ctx, c, ref)
	}
	return false, nil
}

// client is the client of a Node's cluster (see nodeWant.cluster); nil
// for the target cluster when there is none.
func (n *nodeSyncer) client(cluster string) (client.Client, error) {
	if cluster == "" {
		return n.s.target, nil
	}
	return n.s.clusters.client(cluster)
}

// where names a Node and its cluster in errors and the log.
func (n *nodeSyncer) where(ref nodeRef) string {
	return ref.name + " in " + n.s.clusterName(ref.cluster)
}

func (n *nodeSyncer) delete(ctx context.Context, c client.Client, ref nodeRef) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ref.name}}
	err := c.Delete(ctx, node)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("deleting %s: %w", n.where(ref), err)
	}
	n.s.logger.Printf("Node %s deleted", n.where(ref))
	return nil
}

// ready creates or updates the Node and hands it to kwok. It sets
// spec.providerID only when it wants one and the Node has none: another
// controller (Cluster API's infrastructure provider) may set it later, and
// the emulator never clears it. A Node with another providerID than the
// one the emulator wants is of an earlier provisioning: it is deleted and
// created again.
func (n *nodeSyncer) ready(ctx context.Context, c client.Client, hostName string, want nodeWant) error {
	ref := nodeRef{cluster: want.cluster, name: want.name}
	node := &corev1.Node{}
	err := c.Get(ctx, client.ObjectKey{Name: want.name}, node)
	switch {
	case apierrors.IsNotFound(err):
		node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: want.name}}
		setNodeMeta(node, hostName, want)
		node.Spec.ProviderID = want.providerID
		if err := c.Create(ctx, node); err != nil {
			return fmt.Errorf("creating %s: %w", n.where(ref), err)
		}
		n.s.logger.Printf("%s: Node %s created", hostName, n.where(ref))
	case err != nil:
		return fmt.Errorf("reading %s: %w", n.where(ref), err)
	default:
		if node.Spec.ProviderID != "" && want.providerID != "" && node.Spec.ProviderID != want.providerID {
			// spec.providerID cannot change: a Node of another
			// provisioning; start over.
			if err := n.delete(ctx, c, ref); err != nil {
				return err
			}
			return fmt.Errorf("%s had another providerID; deleted to be created again", n.where(ref))
		}
		before := node.DeepCopy()
		setNodeMeta(node, hostName, want)
		if node.Spec.ProviderID == "" {
			node.Spec.ProviderID = want.providerID
		}
		if !equalMetaSpec(before, node) {
			if err := c.Update(ctx, node); err != nil {
				return fmt.Errorf("updating %s: %w", n.where(ref), err)
			}
		}
	}
	before := node.DeepCopy()
	node.Status.Addresses = nodeAddresses(want)
	if cond := readyCondition(node); cond != nil && cond.Status != corev1.ConditionTrue && cond.Reason == PoweredOffReason {
		setReady(node, corev1.ConditionUnknown, PoweredOnReason, "the host powered on and booted; kwok takes the Node over")
	}
	if !equalStatus(before, node) {
		if err := c.Status().Update(ctx, node); err != nil {
			return fmt.Errorf("updating the status of %s: %w", n.where(ref), err)
		}
	}
	// As kubeadm init, whose kubelet registers the Node before the
	// upload-config phase.
	return n.uploadKubeadmConfig(ctx, c, hostName, want)
}

// Where kubeadm init uploads the cluster's configuration, which kubeadm
// join and Cluster API's control-plane provider read back.
const (
	kubeadmConfigMap   = "kubeadm-config"
	clusterConfigKey   = "ClusterConfiguration"
	kubeadmConfigMapNS = metav1.NamespaceSystem
)

// uploadKubeadmConfig does what kubeadm init's upload-config phase does
// for a host whose user-data runs kubeadm init: it stores the
// ClusterConfiguration in kube-system/kubeadm-config. A ConfigMap that is
// already there is left alone: this runs on every sync of the host, and
// another controller (Cluster API's KubeadmControlPlane) may have changed
// it since.
func (n *nodeSyncer) uploadKubeadmConfig(ctx context.Context, c client.Client, hostName string, want nodeWant) error {
	if len(want.kubeadmConfig) == 0 {
		return nil
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: kubeadmConfigMapNS, Name: kubeadmConfigMap},
		Data:       map[string]string{clusterConfigKey: string(want.kubeadmConfig)},
	}
	err := c.Create(ctx, cm)
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil
	case err != nil:
		return fmt.Errorf("uploading %s/%s to %s: %w", kubeadmConfigMapNS, kubeadmConfigMap, n.s.clusterName(want.cluster), err)
	}
	n.s.logger.Printf("%s: kubeadm init: %s/%s uploaded to %s", hostName, kubeadmConfigMapNS, kubeadmConfigMap, n.s.clusterName(want.cluster))
	return nil
}

// notReady takes the Node from kwok, then marks it not Ready; changed
// says it did either.
func (n *nodeSyncer) notReady(ctx context.Context, c client.Client, ref nodeRef) (changed bool, err error) {
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: ref.name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading %s: %w", n.where(ref), err)
	}
	if _, ok := node.Annotations[KwokAnnotation]; ok {
		delete(node.Annotations, KwokAnnotation)
		if err := c.Update(ctx, node); err != nil {
			return false, fmt.Errorf("updating %s: %w", n.where(ref), err)
		}
		changed = true
	}
	if cond := readyCondition(node); cond == nil || cond.Status != corev1.ConditionFalse || cond.Reason != PoweredOffReason {
		setReady(node, corev1.ConditionFalse, PoweredOffReason, "the host is powered off")
		if err := c.Status().Update(ctx, node); err != nil {
			return changed, fmt.Errorf("updating the status of %s: %w", n.where(ref), err)
		}
		n.s.logger.Printf("Node %s not ready: host powered off", n.where(ref))
		changed = true
	}
	return changed, nil
}

func setNodeMeta(node *corev1.Node, hostName string, want nodeWant) {
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	maps.Copy(node.Labels, map[string]string{
		"kubernetes.io/hostname": want.name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "kwok",
	})
	maps.Copy(node.Labels, want.labels)
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[KwokAnnotation] = kwok.NodeAnnotationValue
	node.Annotations[HostAnnotation] = hostName
}

func nodeAddresses(want nodeWant) []corev1.NodeAddress {
	var out []corev1.NodeAddress
	if want.ip != "" {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: want.ip})
	}
	return append(out, corev1.NodeAddress{Type: corev1.NodeHostName, Address: want.name})
}

func readyCondition(node *corev1.Node) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

func setReady(node *corev1.Node, status corev1.ConditionStatus, reason, message string) {
	now := metav1.Now()
	c := corev1.NodeCondition{Type: corev1.NodeReady, Status: status, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: now}
	if old := readyCondition(node); old != nil {
		if old.Status == status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	node.Status.Conditions = append(node.Status.Conditions, c)
}

func equalMetaSpec(a, b *corev1.Node) bool {
	return maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) && a.Spec.ProviderID == b.Spec.ProviderID
}

func equalStatus(a, b *corev1.Node) bool {
	if !slices.Equal(a.Status.Addresses, b.Status.Addresses) || len(a.Status.Conditions) != len(b.Status.Conditions) {
		return false
	}
	for i := range a.Status.Conditions {
		x, y := a.Status.Conditions[i], b.Status.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason {
			return false
		}
	}
	return true
}
