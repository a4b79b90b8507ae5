package installchart

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

func TestImageValues(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	head := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../../config/default\nimages:\n"
	for _, tc := range []struct {
		name, file string
		want       map[string]any
		err        string
	}{
		{name: "as make images writes it", file: head + "- name: localhost/airship/armada-operator\n  digest: " + digest + "\n- name: localhost/airship/haproxy\n  digest: " + digest + "\n- name: localhost/airship/sip-operator\n  digest: " + digest + "\n",
			want: map[string]any{"armada": map[string]any{"image": map[string]any{"digest": digest}}, "sip": map[string]any{"image": map[string]any{"digest": digest}}}},
		{name: "pushed elsewhere", file: head + "- name: localhost/airship/metal3-operator\n  newName: registry.example/airship/metal3-operator\n  digest: " + digest + "\n",
			want: map[string]any{"metal3": map[string]any{"image": map[string]any{"digest": digest, "repository": "registry.example/airship/metal3-operator"}}}},
		{name: "no image of the chart", file: head + "- name: localhost/airship/pause\n  digest: " + digest + "\n", want: map[string]any{}},
		{name: "not a digest", file: head + "- name: localhost/airship/metal3-operator\n  digest: latest\n", err: `images[0] (localhost/airship/metal3-operator): digest "latest" is not a sha256 digest`},
		{name: "unknown field", file: head + "- name: localhost/airship/metal3-operator\n  newTag: v1\n", err: `unknown field "newTag"`},
		{name: "missing", err: "reading the images' digests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ImageValues(dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%v %v, want %v", got, err, tc.want)
			}
		})
	}
}

func TestMergeValues(t *testing.T) {
	dst := map[string]any{"armada": map[string]any{"image": map[string]any{"digest": "d"}, "replicas": 1}, "install": map[string]any{"sip": true}}
	src := map[string]any{"armada": map[string]any{"image": map[string]any{"tag": "v1"}, "replicas": 2}, "install": false, "extra": []any{"a"}}
	got := MergeValues(dst, src)
	want := map[string]any{"armada": map[string]any{"image": map[string]any{"digest": "d", "tag": "v1"}, "replicas": 2}, "install": false, "extra": []any{"a"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged %v, want %v", got, want)
	}
	if _, ok := dst["extra"]; ok || dst["armada"].(map[string]any)["replicas"] != 1 {
		t.Errorf("MergeValues changed its first argument: %v", dst)
	}
}

// TestInstallThenUpgrade installs the chart into a real API server as
// `helm upgrade --install` does, then again with other values: an upgrade
// to exactly those, which takes over a field another manager set.
func TestInstallThenUpgrade(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	chart, _ := paths(t)
	opts := InstallOptions{Dir: chart, Release: "airship", Namespace: "airship-system", Timeout: time.Minute,
		Values: map[string]any{"install": map[string]any{"metal3": false, "sip": false, "promenade": false}, "armada": map[string]any{"replicas": 2}}}
	rev, err := Install(t.Context(), env.Config, opts)
	if err != nil || rev != 1 {
		t.Fatalf("install: revision %d, %v", rev, err)
	}
	key := types.NamespacedName{Namespace: "armada-system", Name: "armada-operator"}
	var d appsv1.Deployment
	if err := env.Client.Get(t.Context(), key, &d); err != nil || *d.Spec.Replicas != 2 {
		t.Fatalf("armada-operator after install: %v %v", d.Spec.Replicas, err)
	}
	// Another manager takes the field over, as clusterctl applying a
	// provider's copy of an object would.
	patch := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"armada-operator","namespace":"armada-system"},"spec":{"replicas":3}}`)
	if err := env.Client.Patch(t.Context(), &d, client.RawPatch(types.ApplyPatchType, patch), client.FieldOwner("someone-else"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	opts.Values = map[string]any{"install": map[string]any{"metal3": false, "sip": false, "promenade": false}}
	rev, err = Install(t.Context(), env.Config, opts)
	if err != nil || rev != 2 {
		t.Fatalf("second install: revision %d, %v", rev, err)
	}
	if err := env.Client.Get(t.Context(), key, &d); err != nil || *d.Spec.Replicas != 1 {
		t.Errorf("armada-operator after the upgrade: replicas %v (%v), want the chart's default 1", *d.Spec.Replicas, err)
	}
	if _, err := Install(t.Context(), env.Config, InstallOptions{Dir: filepath.Join(t.TempDir(), "none"), Release: "x", Namespace: "x"}); err == nil || !strings.Contains(err.Error(), "loading chart") {
		t.Errorf("a missing chart: %v", err)
	}
}
