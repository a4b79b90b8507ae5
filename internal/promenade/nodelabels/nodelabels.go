package nodelabels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Request is the desired label set of one node. A key with a nil value
// (JSON null) asks for the label's removal.
type Request map[string]*string

// Protected labels: the ones that move a node in or out of the control
// plane or one of the etcd clusters. Changing them (adding, removing or
// changing the value) needs force, and the reason says what would happen.
var Protected = map[string]string{
	"kubernetes-apiserver":                  "it schedules (or, when removed, stops scheduling) the kube-apiserver anchor on the node, and joining nodes balance over the API servers labelled so; removal leaves the static pod in place until the node is cleaned up",
	"kubernetes-controller-manager":         "it schedules (or stops scheduling) the kube-controller-manager anchor on the node",
	"kubernetes-scheduler":                  "it schedules (or stops scheduling) the kube-scheduler anchor on the node",
	"kubernetes-etcd":                       "it adds the node to (or takes it out of) the Kubernetes etcd cluster: the etcd anchor adds a member, and removing the label leaves the member in the cluster, which costs quorum once the node goes away",
	"calico-etcd":                           "it adds the node to (or takes it out of) the Calico etcd cluster, which costs quorum if done carelessly",
	"node-role.kubernetes.io/control-plane": "it marks the node as a control-plane node for the kubelet's taints and for workloads that select control-plane nodes",
	"node-role.kubernetes.io/master":        "it marks the node as a master (control-plane) node for workloads that select it",
}

// keptWhenAbsent reports whether a label the request does not mention
// stays: labels in the Kubernetes namespaces belong to the kubelet and
// other components (kubernetes.io/hostname, node-role.kubernetes.io/...),
// as upstream Promenade keeps every label whose key contains
// "kubernetes.io". A request removes one only with an explicit null.
func keptWhenAbsent(key string) bool {
	return strings.Contains(key, "kubernetes.io") || strings.Contains(key, "k8s.io")
}

// FieldError is a malformed label in the request; Field is its key (or
// "body").
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// ForbiddenError is a change of a protected label without force.
type ForbiddenError struct {
	Label, Change, Reason string
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("%s: refusing to %s label %s without force=true: %s", e.Label, e.Change, e.Label, e.Reason)
}

// NotFoundError is a node that does not exist.
type NotFoundError struct{ Node string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("node %q not found", e.Node) }

// Parse decodes a request body: a JSON object of label keys to string
// values (or null), as upstream Promenade takes it. Keys and values are
// checked with the Kubernetes label rules; every problem is named.
func Parse(body []byte) (Request, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, &FieldError{Field: "body", Msg: `must be a JSON object of labels like {"label-a": "value1"}: ` + err.Error()}
	}
	if raw == nil {
		return nil, &FieldError{Field: "body", Msg: `must be a JSON object of labels like {"label-a": "value1"}, not null`}
	}
	req := Request{}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, &FieldError{Field: k, Msg: fmt.Sprintf("invalid label key %q: %s", k, strings.Join(errs, "; "))}
		}
		var v *string
		if err := json.Unmarshal(raw[k], &v); err != nil {
			return nil, &FieldError{Field: k, Msg: fmt.Sprintf("label value must be a string or null, not %s", raw[k])}
		}
		if v != nil {
			if errs := validation.IsValidLabelValue(*v); len(errs) > 0 {
				return nil, &FieldError{Field: k, Msg: fmt.Sprintf("invalid value %q of label %s: %s", *v, k, strings.Join(errs, "; "))}
			}
		}
		req[k] = v
	}
	return req, nil
}

// Change is the difference between a node's labels and a request.
type Change struct {
	Added   map[string]string `json:"added"`
	Changed map[string]string `json:"changed"`
	Removed []string          `json:"removed"`
}

// Empty reports whether nothing changes.
func (c Change) Empty() bool { return len(c.Added)+len(c.Changed)+len(c.Removed) == 0 }

// Diff computes what turns existing into the requested set: labels added
// or with a new value, and labels removed (those the request sets to null,
// and those it does not mention outside the Kubernetes namespaces).
func Diff(existing map[string]string, req Request) Change {
	c := Change{Added: map[string]string{}, Changed: map[string]string{}, Removed: []string{}}
	for k, v := range req {
		old, ok := existing[k]
		switch {
		case v == nil && ok:
			c.Removed = append(c.Removed, k)
		case v == nil:
		case !ok:
			c.Added[k] = *v
		case old != *v:
			c.Changed[k] = *v
		}
	}
	for k := range existing {
		if _, asked := req[k]; !asked && !keptWhenAbsent(k) {
			c.Removed = append(c.Removed, k)
		}
	}
	sort.Strings(c.Removed)
	return c
}

// Check refuses a change of a protected label unless force is set. The
// first offending label (in key order) is named.
func (c Change) Check(force bool) error {
	if force {
		return nil
	}
	type item struct{ key, what string }
	var items []item
	for k := range c.Added {
		items = append(items, item{k, "add"})
	}
	for k := range c.Changed {
		items = append(items, item{k, "change"})
	}
	for _, k := range c.Removed {
		items = append(items, item{k, "remove"})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
	for _, it := range items {
		if reason, ok := Protected[it.key]; ok {
			return &ForbiddenError{Label: it.key, Change: it.what, Reason: reason}
		}
	}
	return nil
}

// patch is a JSON merge patch carrying only the change, with the
// resourceVersion it was computed against: the API server refuses it with
// a conflict when the node changed in between.
func (c Change) patch(resourceVersion string) ([]byte, error) {
	labels := map[string]any{}
	for k, v := range c.Added {
		labels[k] = v
	}
	for k, v := range c.Changed {
		labels[k] = v
	}
	for _, k := range c.Removed {
		labels[k] = nil
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels, "resourceVersion": resourceVersion}})
}

// conflictBackoff spaces the retries of a patch that lost a race with
// another update of the node: enough of them for a handful of concurrent
// requests, with jitter so they do not collide again.
var conflictBackoff = wait.Backoff{Steps: 12, Duration: 10 * time.Millisecond, Factor: 1.5, Jitter: 1, Cap: time.Second}

// Result is the outcome of Apply.
type Result struct {
	Change
	// Labels are the node's labels afterwards.
	Labels map[string]string `json:"labels"`
}

// Apply brings the node's labels to the requested set, changing only
// what differs. A conflicting concurrent update is retried against the
// node's new labels.
func Apply(ctx context.Context, cs kubernetes.Interface, node string, req Request, force bool) (*Result, error) {
	var res *Result
	err := retry.RetryOnConflict(conflictBackoff, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return &NotFoundError{Node: node}
		}
		if err != nil {
			return fmt.Errorf("reading node %s: %w", node, err)
		}
		c := Diff(n.Labels, req)
		if err := c.Check(force); err != nil {
			return err
		}
		if c.Empty() {
			res = &Result{Change: c, Labels: nonNil(n.Labels)}
			return nil
		}
		p, err := c.patch(n.ResourceVersion)
		if err != nil {
			return err
		}
		var out *corev1.Node
		out, err = cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, p, metav1.PatchOptions{FieldManager: "promenade"})
		if apierrors.IsNotFound(err) {
			return &NotFoundError{Node: node}
		}
		if err != nil {
			if apierrors.IsConflict(err) {
				return err
			}
			return fmt.Errorf("patching the labels of node %s: %w", node, err)
		}
		res = &Result{Change: c, Labels: nonNil(out.Labels)}
		return nil
	})
	if err != nil {
		var nf *NotFoundError
		var fe *ForbiddenError
		if errors.As(err, &nf) || errors.As(err, &fe) || !apierrors.IsConflict(err) {
			return nil, err
		}
		return nil, fmt.Errorf("node %s kept changing while its labels were patched, try again: %w", node, err)
	}
	return res, nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
