/*
Copyright The Airship-Go Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	armadav1alpha1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// TestStrictDecode decodes the YAML documents users write into the Go types
// with unknown and duplicate fields rejected, as `kubectl apply
// --validate=strict` and the controller's own decoding do.
func TestStrictDecode(t *testing.T) {
	tests := []struct {
		name    string
		file    string // under testdata/, or
		doc     string // inline
		into    func() any
		check   func(t *testing.T, obj any)
		wantErr string
	}{
		{
			name: "seed-shaped chart with v1-era fields",
			file: "chart-seed.yaml",
			into: func() any { return &armadav1alpha1.ArmadaChart{} },
			check: func(t *testing.T, obj any) {
				c := obj.(*armadav1alpha1.ArmadaChart)
				s := c.Spec
				equal(t, "name", c.Name, "blog-1")
				equal(t, "chart_name", s.ChartName, "blog-1")
				equal(t, "release", s.Release, "blog-1")
				equal(t, "source.type", s.Source.Type, armadav1alpha1.SourceTypeLocal)
				equal(t, "source.subpath", s.Source.Subpath, ".")
				equal(t, "source.reference", s.Source.Reference, "87aad18f7d8c6a1a08f3adc8866efd33bee6aa52")
				equal(t, "install.no_hooks", s.Install != nil && !s.Install.NoHooks, true)
				equal(t, "upgrade.no_hooks", s.Upgrade != nil && s.Upgrade.NoHooks, true)
				equal(t, "dependencies", s.Dependencies, []string{})
				equal(t, "target_state", s.TargetState, armadav1alpha1.TargetStateUninitialized)
				jsonEqual(t, "values", s.Values.Raw, `{"conf":{"foo1":"bar1","foo2":"bar2"}}`)
			},
		},
		{
			name: "full v2 chart",
			file: "chart-full.yaml",
			into: func() any { return &armadav1alpha1.ArmadaChart{} },
			check: func(t *testing.T, obj any) {
				s := obj.(*armadav1alpha1.ArmadaChart).Spec
				equal(t, "source.type", s.Source.Type, armadav1alpha1.SourceTypeTar)
				equal(t, "dependencies", s.Dependencies, []string{"helm-toolkit"})
				jsonEqual(t, "values", s.Values.Raw,
					`{"pod":{"replicas":{"server":3}},"endpoints":{"oslo_db":{"hosts":["mariadb","mariadb-discovery"]}},"debug":true}`)

				w := s.Wait
				equal(t, "wait.timeout", w.Timeout, int64(1800))
				equal(t, "wait.labels", w.Labels, map[string]string{"release_group": "armada-mariadb"})
				equal(t, "len(wait.resources)", len(w.Resources), 3)
				sts, deploy, job := w.Resources[0], w.Resources[1], w.Resources[2]
				equal(t, "resources[0].type", sts.Type, armadav1alpha1.WaitResourceStatefulSet)
				equal(t, "resources[0].min_ready", sts.MinReady, ptr(intstr.FromString("80%")))
				equal(t, "resources[0].allow_async_updates", sts.AllowAsyncUpdates, true)
				equal(t, "resources[0].required", sts.Required, (*bool)(nil))
				equal(t, "resources[1].min_ready", deploy.MinReady, ptr(intstr.FromInt32(2)))
				equal(t, "resources[1].labels", deploy.Labels, map[string]string{"component": "ingress"})
				equal(t, "resources[2].min_ready", job.MinReady, (*intstr.IntOrString)(nil))
				equal(t, "resources[2].required", job.Required, ptr(false))
				equal(t, "wait.native.enabled", w.Native != nil && !w.Native.Enabled, true)

				equal(t, "test.enabled", s.Test.Enabled, ptr(false))
				equal(t, "test.timeout", s.Test.Timeout, int64(600))
				equal(t, "test.options.cleanup", s.Test.Options.Cleanup, true)
				equal(t, "protected.continue_processing", s.Protected.ContinueProcessing, true)
				equal(t, "upgrade.pre.delete", s.Upgrade.Pre.Delete, []armadav1alpha1.ArmadaChartHookAction{
					{Type: armadav1alpha1.HookActionJob, Labels: map[string]string{"application": "mariadb", "component": "db-init"}},
					{Type: armadav1alpha1.HookActionCronJob},
				})
				equal(t, "upgrade.options", *s.Upgrade.Options, armadav1alpha1.ArmadaChartUpgradeOptions{Force: true, NoHooks: true})
				equal(t, "delete.timeout", s.Delete.Timeout, int64(120))
			},
		},
		{
			name: "minimal chart leaves optional parts unset",
			file: "chart-minimal.yaml",
			into: func() any { return &armadav1alpha1.ArmadaChart{} },
			check: func(t *testing.T, obj any) {
				s := obj.(*armadav1alpha1.ArmadaChart).Spec
				equal(t, "release", s.Release, "blog-2")
				equal(t, "source", s.Source, armadav1alpha1.ArmadaChartSource{
					Type: armadav1alpha1.SourceTypeDir, Location: "/opt/armada/helm-charts/testchart",
				})
				equal(t, "values", s.Values == nil, true)
				equal(t, "wait", s.Wait == nil, true)
				equal(t, "test", s.Test == nil, true)
				equal(t, "upgrade", s.Upgrade == nil, true)
				// The CRD defaults target_state on the server; the Go type does not.
				equal(t, "target_state", s.TargetState, armadav1alpha1.TargetState(""))
			},
		},
		{
			name: "chart group",
			file: "chartgroup.yaml",
			into: func() any { return &armadav1alpha1.ArmadaChartGroup{} },
			check: func(t *testing.T, obj any) {
				s := obj.(*armadav1alpha1.ArmadaChartGroup).Spec
				equal(t, "description", s.Description, "Deploys Simple Service")
				equal(t, "sequenced", s.Sequenced, true)
				equal(t, "test_charts", s.TestCharts, ptr(false))
				equal(t, "chart_group", s.ChartGroup, []string{"blog-1", "blog-2"})
				equal(t, "target_state", s.TargetState, armadav1alpha1.TargetStateDeployed)
			},
		},
		{
			name: "manifest",
			file: "manifest.yaml",
			into: func() any { return &armadav1alpha1.ArmadaManifest{} },
			check: func(t *testing.T, obj any) {
				s := obj.(*armadav1alpha1.ArmadaManifest).Spec
				equal(t, "release_prefix", s.ReleasePrefix, "armada")
				equal(t, "chart_groups", s.ChartGroups, []string{"blog-group", "blog-group-2"})
				equal(t, "enable_chart_cleanup", s.EnableChartCleanup, true)
				equal(t, "target_state", s.TargetState, armadav1alpha1.TargetStateDeployed)
			},
		},
		{
			name: "typo in a top-level spec field",
			doc: `
apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChart
metadata: {name: typo}
spec:
  relase: blog-1
  namespace: default
  source: {type: local, location: /charts}
`,
			into:    func() any { return &armadav1alpha1.ArmadaChart{} },
			wantErr: `unknown field "relase"`,
		},
		{
			name: "typo in a nested field",
			doc: `
apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChart
metadata: {name: typo}
spec:
  release: blog-1
  namespace: default
  source: {type: local, location: /charts}
  wait:
    resources:
      - type: deployment
        min_redy: 1
`,
			into:    func() any { return &armadav1alpha1.ArmadaChart{} },
			wantErr: `unknown field "min_redy"`,
		},
		{
			name: "a manifest field on a group",
			doc: `
apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChartGroup
metadata: {name: wrong}
spec:
  chart_groups: [blog-1]
`,
			into:    func() any { return &armadav1alpha1.ArmadaChartGroup{} },
			wantErr: `unknown field "chart_groups"`,
		},
		{
			name: "duplicate field",
			doc: `
apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaManifest
metadata: {name: dup}
spec:
  release_prefix: armada
  release_prefix: other
  chart_groups: [g]
`,
			into:    func() any { return &armadav1alpha1.ArmadaManifest{} },
			wantErr: `"release_prefix" already set`,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.doc)
			if tt.file != "" {
				var err error
				if data, err = os.ReadFile(filepath.Join("testdata", tt.file)); err != nil {
					t.Fatal(err)
				}
			}
			obj := tt.into()
			err := yaml.UnmarshalStrict(data, obj)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("UnmarshalStrict: %v", err)
			}
			tt.check(t, obj)
		})
	}
}

func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

// jsonEqual compares JSON documents by value, ignoring key order.
func jsonEqual(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

func ptr[T any](v T) *T { return &v }
