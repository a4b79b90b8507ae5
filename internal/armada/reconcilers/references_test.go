package reconcilers

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// TestReferenceFieldsAdmission: the API server (the generated CRDs, with
// strict field validation as kubectl applies) refuses references that would
// leave the object's namespace or the operator's chart files, naming the
// field, and admits their legitimate neighbours.
func TestReferenceFieldsAdmission(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "refs")
	const chart = "apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaChart\nmetadata: {name: c}\nspec:\n  release: c\n  namespace: default\n  target_state: uninitialized\n"
	const src = "  source: {type: local, location: /charts, subpath: c}\n"
	tests := []struct {
		name    string
		doc     string
		wantErr string // "" admits
	}{
		{"valuesFrom name naming another namespace", chart + src + "  valuesFrom: [{kind: Secret, name: kube-system/victim}]\n", "spec.valuesFrom[0].name"},
		{"valuesFrom namespace field", chart + src + "  valuesFrom: [{kind: Secret, name: victim, namespace: kube-system}]\n", `unknown field "spec.valuesFrom[0].namespace"`},
		{"valuesFrom kind outside the enum", chart + src + "  valuesFrom: [{kind: ServiceAccountToken, name: x}]\n", "spec.valuesFrom[0].kind"},
		{"valuesFrom in the chart's namespace", chart + src + "  valuesFrom: [{kind: Secret, name: web-values}, {kind: ConfigMap, name: web.defaults}]\n", ""},
		{"dependency naming another namespace", chart + src + "  dependencies: [other/helm-toolkit]\n", "spec.dependencies[0]"},
		{"dependency by name", chart + src + "  dependencies: [helm-toolkit]\n", ""},
		{"dir location that is a URL", chart + "  source: {type: dir, location: 'https://charts.example/c'}\n", "not a URL"},
		{"tar URL of another scheme", chart + "  source: {type: tar, location: 'file:///etc/c.tgz'}\n", "a URL must be http:// or https://"},
		{"tar URL over git", chart + "  source: {type: tar, location: 'git://example/c.tgz'}\n", "a URL must be http:// or https://"},
		{"location climbing", chart + "  source: {type: local, location: /charts/../etc}\n", "source.location must not climb"},
		{"relative location climbing", chart + "  source: {type: tar, location: ../c.tgz}\n", "source.location must not climb"},
		{"subpath climbing", chart + "  source: {type: local, location: /charts, subpath: a/../../etc}\n", "source.subpath must not climb"},
		{"subpath of only ..", chart + "  source: {type: local, location: /charts, subpath: ..}\n", "source.subpath must not climb"},
		{"tar over https", chart + "  source: {type: tar, location: 'https://user@charts.example/c-1..2.tgz?x=../y'}\n", ""},
		{"dots that do not climb", chart + "  source: {type: local, location: /charts/c..d, subpath: ..e/f..}\n", ""},
		{"group member in another namespace", "apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaChartGroup\nmetadata: {name: g}\nspec: {chart_group: [other/c]}\n", "spec.chart_group[0]"},
		{"group member by name", "apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaChartGroup\nmetadata: {name: g}\nspec: {chart_group: [c]}\n", ""},
		{"manifest group in another namespace", "apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaManifest\nmetadata: {name: m}\nspec: {release_prefix: p, chart_groups: [other/g]}\n", "spec.chart_groups[0]"},
		{"manifest group by name", "apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaManifest\nmetadata: {name: m}\nspec: {release_prefix: p, chart_groups: [g]}\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tt.doc), &u.Object); err != nil {
				t.Fatal(err)
			}
			u.SetNamespace(ns)
			err := env.Client.Create(ctx, u, client.FieldValidation("Strict"), client.DryRunAll)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestReferencesResolveInOwnNamespace: what a chart names by name
// (spec.valuesFrom, spec.dependencies) is looked up in the chart's own
// namespace only: an object of that name in another namespace is not read,
// and the chart stalls naming the field and the object it looked for.
func TestReferencesResolveInOwnNamespace(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	tenant, victim := newNamespace(t, "tenant"), newNamespace(t, "victim")
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "vals"}, StringData: map[string]string{"values.yaml": "replicas: 1\n"}}
	if err := env.Client.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	dep := newChart(victim, "toolkit", "toolkit", chartDir(t, "extra"))
	dep.Spec.TargetState = armadav1.TargetStateUninitialized
	if err := env.Client.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*armadav1.ArmadaChart)
		reason string
		want   string
	}{
		{"valuesFrom", func(c *armadav1.ArmadaChart) {
			c.Spec.ValuesFrom = []armadav1.ValuesReference{{Kind: "Secret", Name: "vals"}}
		}, ReasonValuesNotFound, "spec.valuesFrom[0]: Secret " + tenant + "/vals not found"},
		{"dependencies", func(c *armadav1.ArmadaChart) {
			c.Spec.Dependencies = []string{"toolkit"}
		}, ReasonDependencyMissing, "spec.dependencies[0]: ArmadaChart " + tenant + "/toolkit not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChart(tenant, strings.ToLower(tt.name), strings.ToLower(tt.name), chartDir(t, "small"))
			tt.mutate(c)
			if err := env.Client.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			got := waitFor(t, client.ObjectKeyFromObject(c), 60*time.Second, "stalled "+tt.reason, func(c *armadav1.ArmadaChart) bool {
				s := apimeta.FindStatusCondition(c.Status.Conditions, armadav1.StalledCondition)
				return s != nil && s.Status == metav1.ConditionTrue && s.Reason == tt.reason
			})
			if s := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.StalledCondition); !strings.Contains(s.Message, tt.want) {
				t.Fatalf("Stalled message %q, want it to contain %q", s.Message, tt.want)
			}
			if got.Status.HelmRevision != 0 {
				t.Fatalf("release installed (revision %d)", got.Status.HelmRevision)
			}
		})
	}
}
