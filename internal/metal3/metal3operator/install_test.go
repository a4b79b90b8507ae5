package metal3operator

import (
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestInstallDryRun: config/metal3/default, Ironic included, is what a
// real API server accepts (a server-side dry run with strict field
// validation, into its namespace), and the manager's command line, with
// the variables it takes from ironic-bmo-configmap filled in, is one
// metal3-operator accepts: Ironic's endpoint off loopback with a
// credentials file and a CA, the deploy agent's kernel and initramfs.
func TestInstallDryRun(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	ctx := t.Context()
	objs := build(t, "default")
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
	}
	var manager, ironicDeploy *appsv1.Deployment
	var settings *corev1.ConfigMap
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			continue
		}
		if err := env.Client.Create(ctx, u, client.FieldValidation("Strict"), client.DryRunAll); err != nil {
			t.Errorf("%s %s/%s refused: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		switch {
		case u.GetKind() == "Deployment" && u.GetName() == "metal3-operator":
			manager = convert[appsv1.Deployment](t, u)
		case u.GetKind() == "Deployment" && u.GetName() == "ironic":
			ironicDeploy = convert[appsv1.Deployment](t, u)
		case u.GetKind() == "ConfigMap" && u.GetName() == "ironic-bmo-configmap":
			settings = convert[corev1.ConfigMap](t, u)
		}
	}
	if manager == nil || ironicDeploy == nil || settings == nil {
		t.Fatalf("config/metal3/default lacks the manager (%v), Ironic (%v) or ironic-bmo-configmap (%v)", manager != nil, ironicDeploy != nil, settings != nil)
	}
	if s := ironicDeploy.Spec.Strategy.Type; s != appsv1.RecreateDeploymentStrategyType || *ironicDeploy.Spec.Replicas != 1 || !ironicDeploy.Spec.Template.Spec.HostNetwork {
		t.Errorf("Ironic runs as %s with %d replicas, host network %v; want one, recreated, on the host network", s, *ironicDeploy.Spec.Replicas, ironicDeploy.Spec.Template.Spec.HostNetwork)
	}

	c := manager.Spec.Template.Spec.Containers[0]
	vars := map[string]string{}
	for _, e := range c.Env {
		if ref := e.ValueFrom; ref != nil && ref.ConfigMapKeyRef != nil && ref.ConfigMapKeyRef.Name == settings.Name {
			v, ok := settings.Data[ref.ConfigMapKeyRef.Key]
			if !ok {
				t.Errorf("the manager's %s names key %s, which ironic-bmo-configmap lacks", e.Name, ref.ConfigMapKeyRef.Key)
			}
			vars[e.Name] = v
		}
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		for k, v := range vars {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		if strings.Contains(a, "$(") {
			t.Errorf("argument %q names a variable the container does not set", c.Args[i])
		}
		args[i] = a
	}
	o := DefaultOptions()
	fs := flag.NewFlagSet("metal3-operator", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("metal3-operator refuses the manager's arguments %q: %v", args, err)
	}
	// The files come from Secrets in the cluster; here they only need to exist.
	o.IronicCredentialsFile, o.IronicCAFile = testFile(t), testFile(t)
	if err := o.Validate(); err != nil {
		t.Errorf("metal3-operator refuses the manager's arguments %q: %v", args, err)
	}
	if !strings.HasPrefix(o.IronicEndpoint, "https://") || o.DeployKernel == "" || o.DeployRamdisk == "" {
		t.Errorf("the manager reaches Ironic at %q with kernel %q and ramdisk %q; want https and the deploy agent's images", o.IronicEndpoint, o.DeployKernel, o.DeployRamdisk)
	}
}

func convert[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

func testFile(t *testing.T) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "file")
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close() // empty
	return f.Name()
}
