package testenv

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// ServiceAccount is an operator's ServiceAccount and the kustomization
// of the roles bound to it.
type ServiceAccount struct {
	Namespace, Name string
	// RBAC is the kustomization, relative to the repository root, that
	// holds the ServiceAccount's roles and bindings (config/sip/rbac).
	RBAC string
}

// RunAs installs sa's namespace and the objects of sa.RBAC, then runs run
// in the background with env's configuration impersonating sa until the
// test ends: run then sees its context cancelled and must return nil.
// Whatever run does has only the permissions the RBAC grants, so a
// missing one fails the operator, and with it the test that watches what
// the operator should have done.
func RunAs(t testing.TB, env *Env, sa ServiceAccount, run func(ctx context.Context, cfg *rest.Config) error) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sa.Namespace}}
	if err := env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", sa.Namespace, err)
	}
	for _, u := range Kustomize(t, sa.RBAC) {
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name}
	Go(t, ctx, "running as "+sa.Namespace+"/"+sa.Name, func(ctx context.Context) error { return run(ctx, cfg) })
}
