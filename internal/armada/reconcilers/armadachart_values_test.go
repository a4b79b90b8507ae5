package reconcilers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// TestValuesFrom: a chart reading values from a ConfigMap and a Secret
// waits, stalled and naming the entry, until they exist; then deploys with
// the ConfigMap's values, the Secret's over them and spec.values over
// both; a change of the Secret alone upgrades the release; a Secret that
// is not a YAML map stalls it without its content reaching status or
// events.
func TestValuesFrom(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "valuesfrom")
	act := newChart(ns, "web", "web", chartDir(t, "small"))
	act.Spec.ValuesFrom = []armadav1.ValuesReference{
		{Kind: "ConfigMap", Name: "web-defaults", ValuesKey: "defaults.yaml"},
		{Kind: "Secret", Name: "web-values"},
		{Kind: "Secret", Name: "web-extra", Optional: true},
	}
	act.Spec.Values = values(t, `{"replicas": 2}`)
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(act)

	got := waitFor(t, key, 60*time.Second, "Stalled "+ReasonValuesNotFound, stalledWith(ReasonValuesNotFound))
	st := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.StalledCondition)
	if want := "spec.valuesFrom[0]: ConfigMap " + ns + "/web-defaults not found"; !strings.Contains(st.Message, want) {
		t.Fatalf("Stalled message %q, want it to say %q", st.Message, want)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-defaults"},
		Data: map[string]string{"defaults.yaml": "greeting: from-configmap\nreplicas: 1\n"}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	// Creating the ConfigMap wakes the chart, which now waits for the Secret.
	waitFor(t, key, 30*time.Second, "Stalled on the Secret", func(c *armadav1.ArmadaChart) bool {
		s := apimeta.FindStatusCondition(c.Status.Conditions, armadav1.StalledCondition)
		return s != nil && strings.Contains(s.Message, "spec.valuesFrom[1]: Secret "+ns+"/web-values not found")
	})
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-values"},
		Data: map[string][]byte{"values.yaml": []byte("greeting: from-secret\n")}}
	if err := env.Client.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	got = waitFor(t, key, 90*time.Second, "install", satisfiedAt(1))
	if got.Status.HelmRevision != 1 {
		t.Fatalf("after install: revision %d", got.Status.HelmRevision)
	}
	assertGreeting := func(want string, replicas int32) {
		t.Helper()
		var c corev1.ConfigMap
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-config"}, &c); err != nil {
			t.Fatal(err)
		}
		var d appsv1.Deployment
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-web"}, &d); err != nil {
			t.Fatal(err)
		}
		if c.Data["greeting"] != want || d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
			t.Fatalf("release renders greeting %q and %v replicas, want %q and %d", c.Data["greeting"], d.Spec.Replicas, want, replicas)
		}
	}
	assertGreeting("from-secret", 2)

	// The Secret changes, the ArmadaChart does not: a new revision.
	sec.Data["values.yaml"] = []byte("greeting: rotated\n")
	if err := env.Client.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	got = waitFor(t, key, 90*time.Second, "upgrade after the Secret changed", func(c *armadav1.ArmadaChart) bool {
		return c.Status.HelmRevision == 2 && c.Status.Satisfied
	})
	if got.Generation != 1 {
		t.Fatalf("generation %d, want 1: only the Secret changed", got.Generation)
	}
	assertGreeting("rotated", 2)

	// Not a YAML map: stalled, and the content is not repeated anywhere.
	const secret = "hunter2-in-a-secret"
	sec.Data["values.yaml"] = []byte("- " + secret + "\n")
	if err := env.Client.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	got = waitFor(t, key, 30*time.Second, "Stalled "+ReasonInvalidValues, stalledWith(ReasonInvalidValues))
	st = apimeta.FindStatusCondition(got.Status.Conditions, armadav1.StalledCondition)
	if !strings.Contains(st.Message, "spec.valuesFrom[1]: Secret "+ns+"/web-values: key values.yaml is not a YAML map") {
		t.Fatalf("Stalled message %q does not name the entry and key", st.Message)
	}
	assertNoSecret(t, ns, act.Name, got, secret)
}

func TestMergeValues(t *testing.T) {
	tests := []struct {
		name           string
		dst, src, want map[string]any
	}{
		{"nested maps merge", map[string]any{"a": map[string]any{"x": 1, "y": 2}}, map[string]any{"a": map[string]any{"y": 3}},
			map[string]any{"a": map[string]any{"x": 1, "y": 3}}},
		{"a scalar replaces a map", map[string]any{"a": map[string]any{"x": 1}}, map[string]any{"a": "flat"}, map[string]any{"a": "flat"}},
		{"a map replaces a scalar", map[string]any{"a": 1}, map[string]any{"a": map[string]any{"x": 1}}, map[string]any{"a": map[string]any{"x": 1}}},
		{"lists are replaced", map[string]any{"l": []any{1, 2}}, map[string]any{"l": []any{3}}, map[string]any{"l": []any{3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcBefore := fmt.Sprint(tt.src)
			mergeValues(tt.dst, tt.src)
			if fmt.Sprint(tt.dst) != fmt.Sprint(tt.want) {
				t.Fatalf("merged %v, want %v", tt.dst, tt.want)
			}
			// Later merges into dst never reach back into src.
			mergeValues(tt.dst, map[string]any{"a": map[string]any{"z": 9}})
			if fmt.Sprint(tt.src) != srcBefore {
				t.Fatalf("merging changed the source: %v, was %s", tt.src, srcBefore)
			}
		})
	}
}
