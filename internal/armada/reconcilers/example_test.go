package reconcilers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestExampleSite deploys examples/site/function/armada-site/manifest.yaml (strictly
// decoded, so a typo in the example fails here) with its chart directory in
// place of /charts, and waits for the manifest to be satisfied.
func TestExampleSite(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "examples", "site", "function", "armada-site")
	data, err := os.ReadFile(filepath.Join(dir, "manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, "example")
	r := utilyaml.NewYAMLReader(bufioReader(bytes.NewReader(data)))
	var manifest *armadav1.ArmadaManifest
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var tm struct{ Kind string }
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatal(err)
		}
		var obj client.Object
		switch tm.Kind {
		case "ArmadaChart":
			c := &armadav1.ArmadaChart{}
			if err := yaml.UnmarshalStrict(doc, c); err != nil {
				t.Fatalf("example chart: %v", err)
			}
			c.Spec.Source.Location = filepath.Join(dir, "charts")
			c.Spec.Namespace = ns
			obj = c
		case "ArmadaChartGroup":
			g := &armadav1.ArmadaChartGroup{}
			if err := yaml.UnmarshalStrict(doc, g); err != nil {
				t.Fatalf("example group: %v", err)
			}
			obj = g
		case "ArmadaManifest":
			manifest = &armadav1.ArmadaManifest{}
			if err := yaml.UnmarshalStrict(doc, manifest); err != nil {
				t.Fatalf("example manifest: %v", err)
			}
			obj = manifest
		default:
			t.Fatalf("unexpected kind %q in the example", tm.Kind)
		}
		obj.SetNamespace(ns)
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if manifest == nil {
		t.Fatal("the example has no ArmadaManifest")
	}
	var got armadav1.ArmadaManifest
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(manifest), &got); err != nil {
			return false, err
		}
		return got.Status.Satisfied, nil
	}); err != nil {
		dumpCharts(t, ns)
		t.Fatalf("example manifest not satisfied: %v; status %+v", err, got.Status)
	}
	if got.Status.Summary != "2/2" || !apimeta.IsStatusConditionTrue(got.Status.Conditions, armadav1.ReadyCondition) {
		t.Fatalf("status %+v", got.Status)
	}
}
