package helm

import (
	"context"
	"errors"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// configMapChart renders one ConfigMap whose data.color is the value
// "color", so every action's effect can be read back from the cluster.
func configMapChart() *chartv2.Chart {
	return &chartv2.Chart{
		Metadata: &chartv2.Metadata{APIVersion: chartv2.APIVersionV2, Name: "paint", Version: "0.1.0"},
		Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: paint
data:
  color: {{ .Values.color | quote }}
  size: {{ .Values.size | default "m" | quote }}
`)}},
	}
}

// testReleaseLifecycle drives one release through every Client action
// against a real API server and checks each by what the cluster and Helm's
// release records hold afterwards.
func testReleaseLifecycle(t *testing.T, env *testenv.Env) {
	ctx := context.Background()
	c := New(env.Config, nil)
	const ns, name = "paint-ns", "paint"
	color := func() string {
		t.Helper()
		var cm corev1.ConfigMap
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "paint"}, &cm); err != nil {
			t.Fatal(err)
		}
		return cm.Data["color"] + "/" + cm.Data["size"]
	}
	opts := func(values map[string]any, digest string) Options {
		return Options{Namespace: ns, Name: name, Chart: configMapChart(), Values: values, Digest: digest, Timeout: time.Minute}
	}

	if last, err := c.Last(ns, name); err != nil || last != nil {
		t.Fatalf("Last before install = %v, %v; want nil, nil", last, err)
	}
	// What the install applied is recorded as the API server answered it.
	applied := &Applied{}
	o := opts(map[string]any{"color": "red", "size": "l"}, "d1")
	o.Applied = applied
	rel, err := c.Install(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	liveUID := func() types.UID {
		t.Helper()
		var cm corev1.ConfigMap
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "paint"}, &cm); err != nil {
			t.Fatal(err)
		}
		return cm.UID
	}
	paint := ObjectRef{GroupKind: schema.GroupKind{Kind: "ConfigMap"}, Namespace: ns, Name: "paint"}
	if m, ok := applied.Lookup(paint); !ok || m.UID == "" || m.UID != liveUID() {
		t.Fatalf("install recorded %+v (%t) for the ConfigMap; live UID %s", m, ok, liveUID())
	}
	if _, ok := applied.Lookup(ObjectRef{GroupKind: schema.GroupKind{Kind: "Secret"}, Namespace: ns, Name: "paint"}); ok {
		t.Fatal("install recorded an object it did not apply")
	}
	if rel.Version != 1 || rel.Info.Status != rcommon.StatusDeployed || rel.Labels[DigestLabel] != "d1" {
		t.Fatalf("install: revision %d %s labels %v", rel.Version, rel.Info.Status, rel.Labels)
	}
	// A second install of the name is refused before anything changes.
	if again, err := c.Install(ctx, opts(map[string]any{"color": "green"}, "d9")); !errors.Is(err, ErrNameInUse) || again != nil {
		t.Fatalf("second install = %v, %v; want ErrNameInUse", again, err)
	}
	if h, err := c.History(ns, name); err != nil || len(h) != 1 {
		t.Fatalf("history after the refused install: %d revisions, %v", len(h), err)
	}
	var nsObj corev1.Namespace
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &nsObj); err != nil || nsObj.Labels["name"] != ns {
		t.Fatalf("release namespace not created with Helm's label: %v %v", nsObj.Labels, err)
	}
	if got := color(); got != "red/l" {
		t.Fatalf("after install %s", got)
	}

	// Upgrade takes exactly the new values: size is not carried over.
	upApplied := &Applied{}
	o = opts(map[string]any{"color": "blue"}, "d2")
	o.Applied = upApplied
	rel, err = c.Upgrade(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := upApplied.Lookup(paint); !ok || m.UID != liveUID() {
		t.Fatalf("upgrade recorded %+v (%t) for the ConfigMap; live UID %s", m, ok, liveUID())
	}
	if rel.Version != 2 || rel.Labels[DigestLabel] != "d2" {
		t.Fatalf("upgrade: revision %d labels %v", rel.Version, rel.Labels)
	}
	if got := color(); got != "blue/m" {
		t.Fatalf("after upgrade %s, want blue/m (values reset, not reused)", got)
	}
	for _, tt := range []struct{ before, want int }{{0, 2}, {2, 1}, {1, 0}} {
		if got, err := c.LastSuccessful(ns, name, tt.before); err != nil || got != tt.want {
			t.Errorf("LastSuccessful(before=%d) = %d, %v; want %d", tt.before, got, err, tt.want)
		}
	}

	// Drift: a hand change is "changed", a deletion "missing".
	if missing, changed, err := c.Drift(rel); err != nil || len(missing)+len(changed) != 0 {
		t.Fatalf("drift right after upgrade: %v %v %v", missing, changed, err)
	}
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "paint"}, &cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "green"
	if err := env.Client.Update(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	if _, changed, err := c.Drift(rel); err != nil || len(changed) != 1 || changed[0] != "ConfigMap paint-ns/paint" {
		t.Errorf("drift after a hand change: %v %v", changed, err)
	}
	if err := env.Client.Delete(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	if missing, _, err := c.Drift(rel); err != nil || len(missing) != 1 || missing[0] != "ConfigMap paint-ns/paint" {
		t.Errorf("drift after a deletion: %v %v", missing, err)
	}

	// The operator's wait rejects revision 2: it no longer counts.
	if err := c.MarkFailed(ns, rel, "wait timed out"); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.LastSuccessful(ns, name, 0); got != 1 {
		t.Errorf("LastSuccessful after marking 2 failed = %d, want 1", got)
	}
	if last, _ := c.Last(ns, name); last.Info.Status != rcommon.StatusFailed || last.Info.Description != "wait timed out" {
		t.Errorf("revision 2 after MarkFailed: %s %q", last.Info.Status, last.Info.Description)
	}
	// Unlock touches only pending revisions.
	if ok, err := c.Unlock(ns, rel); err != nil || ok {
		t.Errorf("Unlock of a failed revision = %v, %v; want false", ok, err)
	}

	// Rollback to revision 1 brings its values and digest back.
	rel, err = c.Rollback(ns, name, 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Version != 3 || rel.Labels[DigestLabel] != "d1" {
		t.Errorf("rollback: revision %d labels %v", rel.Version, rel.Labels)
	}
	if got := color(); got != "red/l" {
		t.Errorf("after rollback %s, want red/l", got)
	}
	if h, err := c.History(ns, name); err != nil || len(h) != 3 {
		t.Errorf("history: %d revisions, %v", len(h), err)
	}

	// A revision left pending by a dead operator is unlocked as failed.
	rel.Info.Status = rcommon.StatusPendingUpgrade
	if ok, err := c.Unlock(ns, rel); err != nil || !ok {
		t.Fatalf("Unlock of a pending revision = %v, %v", ok, err)
	}
	if last, _ := c.Last(ns, name); last.Info.Status != rcommon.StatusFailed {
		t.Errorf("after Unlock: %s", last.Info.Status)
	}

	if err := c.Uninstall(ns, name, time.Minute); err != nil {
		t.Fatal(err)
	}
	if last, err := c.Last(ns, name); err != nil || last != nil {
		t.Errorf("Last after uninstall = %v, %v", last, err)
	}
	if err := c.Uninstall(ns, name, time.Minute); err != nil {
		t.Errorf("uninstalling a missing release: %v", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "paint"}, &cm); err == nil {
		t.Error("the release's ConfigMap outlived the uninstall")
	}
}
