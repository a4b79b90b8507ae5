package local

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func clientset(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	cfg.Timeout = 10 * time.Second
	return kubernetes.NewForConfig(cfg)
}

// bootstrapCluster grants kwok exactly what it needs to play the kubelet:
// Node and Pod status, Pod deletion, Node leases and events.
func bootstrapCluster(ctx context.Context, kubeconfig string) error {
	cs, err := clientset(kubeconfig)
	if err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "airship:kwok", Labels: map[string]string{"app.kubernetes.io/managed-by": "airshipctl"}},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"get", "list", "watch", "patch", "update", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"nodes/status", "pods/status"}, Verbs: []string{"get", "patch", "update"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
			{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "airship:kwok", Labels: role.Labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: kwokUser}},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRole %s: %w", role.Name, err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", binding.Name, err)
	}
	return nil
}

// NodeName is the name of the i-th kwok Node (0-based).
func NodeName(i int) string {
	if i == 0 {
		return "airship-control-plane"
	}
	return fmt.Sprintf("airship-worker-%d", i)
}

// createNodes creates n kwok Nodes (keeping any that exist) and waits until
// all are Ready. The first carries the control-plane role label, the others
// the worker label; none is tainted, so workloads need no tolerations.
func createNodes(ctx context.Context, kubeconfig string, n int) error {
	cs, err := clientset(kubeconfig)
	if err != nil {
		return err
	}
	for i := range n {
		name := NodeName(i)
		role := "worker"
		if i == 0 {
			role = "control-plane"
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname":          name,
				"kubernetes.io/os":                "linux",
				"kubernetes.io/arch":              "amd64",
				"node-role.kubernetes.io/" + role: "",
				"type":                            "kwok",
			},
			Annotations: map[string]string{FakeNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
		}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Node %s: %w", name, err)
		}
	}
	var last string
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ready, total, err := countNodes(ctx, cs)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("%d of %d Ready", ready, total)
		return ready >= n, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d kwok nodes to be Ready (%s): %w", n, last, err)
	}
	return nil
}

func countNodes(ctx context.Context, cs kubernetes.Interface) (ready, total int, err error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready, len(nodes.Items), nil
}
