package clusterctl

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/apply"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// Status reports what the phase has done.
//
// For init, one object per provider of init-options: applied when
// clusterctl's inventory in the phase's cluster lists it, ready when every
// Deployment of the provider is Available, drifted when the inventory holds
// another version than the document asks for.
//
// For move, for each move namespace in order: the namespace when the
// parent marks it moved (ready when to the phase's cluster) or being moved
// (not ready: the move stopped half-way, and running the phase again
// finishes it), then one object per Cluster API Cluster of it found in
// either cluster: applied when it is on the phase's cluster, ready when it
// is there, unpaused, and gone from the parent, drifted when it is on both
// (an interrupted move leaves it paused on one side). A move moves no
// status: Cluster API rebuilds it on the target, and infrastructure
// providers must rebuild theirs.
func (e *Executor) Status(ctx context.Context) (*executor.Status, error) {
	if e.cfg.Kubeconfig == nil || e.cfg.ClusterName == "" {
		return nil, fmt.Errorf("phase %q: clusterctl status needs metadata.clusterName and a kubeconfig for it", e.cfg.PhaseName)
	}
	switch e.api.Action {
	case v1.ActionInit:
		return e.initStatus(ctx)
	case v1.ActionMove:
		return e.moveStatus(ctx)
	}
	return nil, fmt.Errorf("phase %q: clusterctl action %q is not one of init, move", e.cfg.PhaseName, e.api.Action)
}

func (e *Executor) client(ctx context.Context, cluster string) (client.Client, error) {
	rc, err := e.cfg.RESTConfig(ctx, cluster)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("client for cluster %q: %w", cluster, err)
	}
	return c, nil
}

// inventoryEntry is one Provider object of clusterctl's inventory.
type inventoryEntry struct {
	namespace, version string
	typ                clusterctlv1.ProviderType
}

// readInventory returns clusterctl's inventory of a cluster by provider
// label (cluster-api, bootstrap-kubeadm, ...); found is false when the
// inventory's CRD is not installed.
func readInventory(ctx context.Context, c client.Client) (entries map[string]inventoryEntry, found bool, err error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(clusterctlv1.GroupVersion.WithKind("ProviderList"))
	if err := c.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("reading clusterctl's provider inventory: %w", err)
	}
	entries = map[string]inventoryEntry{}
	for _, it := range list.Items {
		name, _, _ := unstructured.NestedString(it.Object, "providerName")
		typ, _, _ := unstructured.NestedString(it.Object, "type")
		version, _, _ := unstructured.NestedString(it.Object, "version")
		entries[clusterctlv1.ManifestLabel(name, clusterctlv1.ProviderType(typ))] = inventoryEntry{namespace: it.GetNamespace(), version: version, typ: clusterctlv1.ProviderType(typ)}
	}
	return entries, true, nil
}

func (e *Executor) initStatus(ctx context.Context) (*executor.Status, error) {
	entries, err := e.initEntries()
	if err != nil {
		return nil, err
	}
	c, err := e.client(ctx, e.cfg.ClusterName)
	if err != nil {
		return nil, err
	}
	inv, found, err := readInventory(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("phase %q on cluster %q: %w", e.cfg.PhaseName, e.cfg.ClusterName, err)
	}
	st := &executor.Status{Phase: e.cfg.PhaseName}
	if !found {
		st.Message = fmt.Sprintf("never run: cluster %q has no clusterctl provider inventory", e.cfg.ClusterName)
	}
	for _, en := range entries {
		label := clusterctlv1.ManifestLabel(en.name, en.typ)
		o := executor.ObjectStatus{ID: string(en.typ) + "/" + en.name}
		got, ok := inv[label]
		if !ok {
			o.Message = "not installed"
			st.Objects = append(st.Objects, o)
			continue
		}
		o.Applied = true
		o.Drifted = got.version != en.version
		var msgs []string
		if o.Drifted {
			msgs = append(msgs, fmt.Sprintf("version %s installed, %s wanted", got.version, en.version))
		} else {
			msgs = append(msgs, got.version)
		}
		msgs = append(msgs, "namespace "+got.namespace)
		ready, msg, err := deploymentsReady(ctx, c, got.namespace, label)
		if err != nil {
			return nil, fmt.Errorf("phase %q: provider %s: %w", e.cfg.PhaseName, label, err)
		}
		o.Ready = ready
		o.Message = strings.Join(append(msgs, msg), "; ")
		st.Objects = append(st.Objects, o)
	}
	return st, nil
}

// providerLabel is the label clusterctl puts on every object of a provider.
const providerLabel = "cluster.x-k8s.io/provider"

// deploymentsReady reports whether every Deployment clusterctl installed
// for a provider is Available. A provider without Deployments is ready.
func deploymentsReady(ctx context.Context, c client.Client, namespace, label string) (bool, string, error) {
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{providerLabel: label}); err != nil {
		return false, "", fmt.Errorf("listing Deployments in %s: %w", namespace, err)
	}
	if len(list.Items) == 0 {
		return true, "no Deployments", nil
	}
	ready := true
	var parts []string
	for _, d := range list.Items {
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		available := d.Status.ObservedGeneration >= d.Generation && deploymentAvailable(&d)
		if !available {
			ready = false
		}
		p := fmt.Sprintf("%s %d/%d available", d.Name, d.Status.AvailableReplicas, want)
		if want == 0 {
			p = d.Name + " scaled to 0"
		}
		parts = append(parts, p)
	}
	return ready, strings.Join(parts, ", "), nil
}

func deploymentAvailable(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// moveNamespaces are the namespaces move works in, in order:
// move-options.namespace then move-options.namespaces; when neither is
// given, the namespace of the parent's kubeconfig context, as clusterctl
// does, or default.
func (e *Executor) moveNamespaces(ctx context.Context, from string) ([]string, error) {
	if o := e.api.MoveOptions; o != nil && (o.Namespace != "" || len(o.Namespaces) > 0) {
		var nss []string
		for _, ns := range append([]string{o.Namespace}, o.Namespaces...) {
			if ns != "" && !slices.Contains(nss, ns) {
				nss = append(nss, ns)
			}
		}
		return nss, nil
	}
	if e.cfg.Kubeconfig != nil {
		kc, err := e.cfg.Kubeconfig(ctx, kubeconfig.Request{Cluster: from})
		if err != nil {
			return nil, err
		}
		if c := kc.Contexts[kc.CurrentContext]; c != nil && c.Namespace != "" {
			return []string{c.Namespace}, nil
		}
	}
	return []string{corev1.NamespaceDefault}, nil
}

// clusterState is one Cluster as seen in one cluster.
type clusterState struct {
	paused bool
	phase  string
}

func listClusters(ctx context.Context, c client.Client, namespace string) (map[string]clusterState, error) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	list.SetKind("ClusterList")
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return map[string]clusterState{}, nil
		}
		return nil, err
	}
	out := map[string]clusterState{}
	for _, it := range list.Items {
		paused, _, _ := unstructured.NestedBool(it.Object, "spec", "paused")
		phase, _, _ := unstructured.NestedString(it.Object, "status", "phase")
		out[it.GetName()] = clusterState{paused: paused, phase: phase}
	}
	return out, nil
}

func (e *Executor) moveStatus(ctx context.Context) (*executor.Status, error) {
	from, err := e.parent()
	if err != nil {
		return nil, err
	}
	nss, err := e.moveNamespaces(ctx, from)
	if err != nil {
		return nil, err
	}
	tc, err := e.client(ctx, e.cfg.ClusterName)
	if err != nil {
		return nil, err
	}
	pc, err := e.client(ctx, from)
	if err != nil {
		return nil, err
	}
	moved, err := apply.MovedNamespaces(ctx, pc, nss)
	if err != nil {
		return nil, fmt.Errorf("phase %q: cluster %q: %w", e.cfg.PhaseName, from, err)
	}
	st := &executor.Status{Phase: e.cfg.PhaseName}
	var moving []string
	found := false
	for _, ns := range nss {
		if m, ok := moved[ns]; ok {
			o := executor.ObjectStatus{ID: "Namespace " + ns, Applied: true, Ready: !m.Moving && m.To == e.cfg.ClusterName,
				Message: fmt.Sprintf("on %q marked moved to %q (%s)", from, m.To, apply.MovedToAnnotation)}
			if m.Moving {
				moving = append(moving, fmt.Sprintf("%q", ns))
				o.Message = fmt.Sprintf("on %q marked being moved to %q (%s): the move stopped half-way; run phase %q again to finish it",
					from, m.To, apply.MovingToAnnotation, e.cfg.PhaseName)
			}
			st.Objects = append(st.Objects, o)
		}
		objs, err := e.clusterStatus(ctx, pc, tc, from, ns)
		if err != nil {
			return nil, err
		}
		found = found || len(objs) > 0
		st.Objects = append(st.Objects, objs...)
	}
	names := make([]string, len(nss))
	for i, ns := range nss {
		names[i] = fmt.Sprintf("%q", ns)
	}
	switch {
	case len(moving) > 0:
		st.Message = fmt.Sprintf("the move of namespace %s from %q to %q stopped half-way (namespace %s marked %s): run phase %q again to finish it",
			strings.Join(names, ", "), from, e.cfg.ClusterName, strings.Join(moving, ", "), apply.MovingToAnnotation, e.cfg.PhaseName)
	case !found:
		st.Message = fmt.Sprintf("no Cluster API Cluster in namespace %s of %q or %q", strings.Join(names, ", "), from, e.cfg.ClusterName)
	default:
		st.Message = fmt.Sprintf("moves namespace %s from %q to %q", strings.Join(names, ", "), from, e.cfg.ClusterName)
	}
	return st, nil
}

// clusterStatus reports each Cluster API Cluster of namespace ns found on
// the parent (pc, cluster from) or the phase's cluster (tc).
func (e *Executor) clusterStatus(ctx context.Context, pc, tc client.Client, from, ns string) ([]executor.ObjectStatus, error) {
	read := func(c client.Client, cluster string) (map[string]clusterState, error) {
		cl, err := listClusters(ctx, c, ns)
		if err != nil {
			return nil, fmt.Errorf("phase %q: listing Cluster API Clusters in namespace %q of cluster %q: %w", e.cfg.PhaseName, ns, cluster, err)
		}
		return cl, nil
	}
	onTarget, err := read(tc, e.cfg.ClusterName)
	if err != nil {
		return nil, err
	}
	onParent, err := read(pc, from)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for n := range onTarget {
		names[n] = true
	}
	for n := range onParent {
		names[n] = true
	}
	var out []executor.ObjectStatus
	for _, n := range slices.Sorted(maps.Keys(names)) {
		t, onT := onTarget[n]
		p, onP := onParent[n]
		o := executor.ObjectStatus{ID: "Cluster " + ns + "/" + n, Applied: onT, Drifted: onT && onP}
		o.Ready = onT && !onP && !t.paused
		switch {
		case onT && onP:
			o.Message = fmt.Sprintf("on both %q (paused=%v) and %q (paused=%v): move interrupted, run it again", from, p.paused, e.cfg.ClusterName, t.paused)
		case onT && t.paused:
			o.Message = fmt.Sprintf("moved to %q but still paused", e.cfg.ClusterName)
		case onT:
			o.Message = fmt.Sprintf("moved to %q (%s)", e.cfg.ClusterName, phaseText(t.phase))
		default:
			o.Message = fmt.Sprintf("not moved: still on %q (%s)", from, phaseText(p.phase))
		}
		out = append(out, o)
	}
	return out, nil
}

// phaseText describes a Cluster's status.phase; a moved Cluster has none
// until the managers on the target reconcile it.
func phaseText(phase string) string {
	if phase == "" {
		return "no status yet"
	}
	return "phase " + phase
}
