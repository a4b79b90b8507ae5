package installchart

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/action"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// paths returns the chart's directory and config/default's.
func paths(t *testing.T) (chart, config string) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, ChartDir), filepath.Join(root, ConfigDir)
}

// key names an object as kubectl would list it.
func key(kind, namespace, name string) string { return kind + " " + namespace + "/" + name }

// normal turns an object into plain JSON values, so numbers read from YAML
// by kustomize and by Helm compare equal.
func normal(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func byKey(t *testing.T, objs []map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, o := range objs {
		k := key(kindOf(o), namespaceOf(o), nameOf(o))
		if kindOf(o) == "" || nameOf(o) == "" {
			t.Errorf("object without kind or name: %v", o)
		}
		if _, dup := out[k]; dup {
			t.Errorf("%s twice", k)
		}
		out[k] = normal(t, o)
	}
	return out
}

func maps(us []*unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, len(us))
	for i, u := range us {
		out[i] = u.Object
	}
	return out
}

func kustomized(t *testing.T) []map[string]any {
	t.Helper()
	_, config := paths(t)
	objs, err := Kustomize(config)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func render(t *testing.T, vals map[string]any) *Rendered {
	t.Helper()
	chart, _ := paths(t)
	start := time.Now()
	r, err := Render(chart, "airship", "airship-install", vals)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rendered the chart in %s", time.Since(start).Round(time.Millisecond))
	return r
}

// values parses YAML values as `helm install -f` reads them.
func values(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestChartIsGenerated: the committed chart is what hack/chart writes from
// config/default now (make verify checks the same; this fails first).
func TestChartIsGenerated(t *testing.T) {
	chart, _ := paths(t)
	files, err := Generate(kustomized(t))
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[string]bool{}
	err = filepath.WalkDir(chart, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(chart, path)
		onDisk[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(chart, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale (%v): run make generate", name, err)
		}
		delete(onDisk, name)
	}
	for name := range onDisk {
		t.Errorf("%s is not generated: run make generate", name)
	}
}

// TestLint runs Helm's own linter (helm lint --strict) over the chart.
func TestLint(t *testing.T) {
	chart, _ := paths(t)
	lint := action.NewLint()
	lint.Strict = true
	lint.Namespace = "airship-install"
	res := lint.Run([]string{chart}, nil)
	for _, err := range res.Errors {
		t.Errorf("lint: %v", err)
	}
	for _, m := range res.Messages {
		// INFO (an icon is recommended) is advice; a warning or error fails.
		if m.Severity > 1 {
			t.Errorf("lint: %s", m)
		}
	}
	if res.TotalChartsLinted != 1 {
		t.Errorf("linted %d charts", res.TotalChartsLinted)
	}
}

// TestDefaultsEqualConfigDefault: with default values the chart renders
// exactly the objects of config/default, field for field, so the two
// installs cannot drift apart.
func TestDefaultsEqualConfigDefault(t *testing.T) {
	want := byKey(t, kustomized(t))
	r := render(t, nil)
	got := byKey(t, append(maps(r.Objects), maps(r.CRDs)...))
	var gotKeys, wantKeys []string
	for k := range got {
		gotKeys = append(gotKeys, k)
	}
	for k := range want {
		wantKeys = append(wantKeys, k)
	}
	sort.Strings(gotKeys)
	sort.Strings(wantKeys)
	if d := cmp.Diff(wantKeys, gotKeys); d != "" {
		t.Fatalf("objects of config/default (-) and of the chart (+):\n%s", d)
	}
	for k, w := range want {
		if d := cmp.Diff(w, got[k]); d != "" {
			t.Errorf("%s: config/default (-) and chart (+) differ:\n%s", k, d)
		}
	}
	if len(r.CRDs) != 17 || len(r.Objects) != 49 {
		t.Errorf("%d CRDs and %d objects; config/default has 17 and 49 (33, the metal3 operator's 7 admission policies and their bindings, and Ironic's Deployment and ConfigMap)", len(r.CRDs), len(r.Objects))
	}
	if !strings.Contains(r.Notes, "promenade-api-tls") {
		t.Errorf("NOTES do not say which Secrets the Promenade API needs:\n%s", r.Notes)
	}
}

func deployments(t *testing.T, r *Rendered) map[string]*appsv1.Deployment {
	t.Helper()
	out := map[string]*appsv1.Deployment{}
	for _, o := range r.Objects {
		if o.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, &d, true); err != nil {
			t.Fatalf("Deployment %s: %v", o.GetName(), err)
		}
		if d.Name == "ironic" {
			// Not an operator of the chart's values: Metal3's Ironic, as
			// written in config/metal3/ironic (TestIronicAsWritten).
			continue
		}
		out[d.Name] = &d
	}
	return out
}

// checkSecurity checks what the issue asks of every Deployment: non-root,
// read-only root, no capabilities, no privilege escalation, requests and a
// memory limit, probes on the probe (or serving) port, leader election.
func checkSecurity(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	pod := d.Spec.Template.Spec
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("%s: pod not runAsNonRoot", d.Name)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers", d.Name, len(pod.Containers))
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: container security context %+v", d.Name, sc)
	} else if sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("%s: capabilities %+v, want ALL dropped", d.Name, sc.Capabilities)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("%s: resources %+v", d.Name, c.Resources)
	}
	probePort := "probes"
	if d.Name == "promenade" {
		probePort = "https"
	}
	named := false
	for _, p := range c.Ports {
		named = named || p.Name == probePort
	}
	for what, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		switch {
		case p == nil || p.HTTPGet == nil:
			t.Errorf("%s: no HTTP %s probe", d.Name, what)
		case p.HTTPGet.Port.String() != probePort || !named:
			t.Errorf("%s: %s probe on port %q, want the container port %q", d.Name, what, p.HTTPGet.Port.String(), probePort)
		}
	}
	args := strings.Join(c.Args, " ")
	switch d.Name {
	case "promenade":
		if !strings.Contains(args, "--tls-cert=/tls/tls.crt --tls-key=/tls/tls.key --token-file=/token/token") {
			t.Errorf("promenade: args %q do not serve HTTPS with a token", args)
		}
	default:
		if !strings.Contains(" "+args+" ", " --leader-elect ") || !strings.Contains(args, "--health-probe-bind-address=:8081") {
			t.Errorf("%s: args %q lack leader election or the probe address", d.Name, args)
		}
	}
}

// TestValues renders the chart with overrides and checks each reaches the
// objects, and that every Deployment keeps its security settings.
func TestValues(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	all := []string{"armada-operator", "metal3-operator", "sip-operator", "promenade"}
	tests := []struct {
		name   string
		values string
		// deployments expected, by name.
		deployments []string
		check       func(t *testing.T, r *Rendered, ds map[string]*appsv1.Deployment)
	}{
		{
			name:        "defaults",
			deployments: all,
			check: func(t *testing.T, _ *Rendered, ds map[string]*appsv1.Deployment) {
				for _, name := range all {
					c := ds[name].Spec.Template.Spec.Containers[0]
					if c.Image != "localhost/airship/"+name+":latest" || c.ImagePullPolicy != "" || *ds[name].Spec.Replicas != 1 {
						t.Errorf("%s: image %q, pull policy %q, replicas %d", name, c.Image, c.ImagePullPolicy, *ds[name].Spec.Replicas)
					}
				}
			},
		},
		{
			name: "images from a registry, replicas, pull policy and secrets",
			values: `
imagePullPolicy: IfNotPresent
imagePullSecrets: [{name: regcred}]
armada:
  image: {repository: registry.example:5000/airship/armada-operator, tag: v0.1.0}
  replicas: 3
sip:
  image: {repository: registry.example:5000/airship/sip-operator, digest: ` + digest + `}
metal3:
  resources: {requests: {cpu: 250m, memory: 256Mi}, limits: {memory: 1Gi}}
  nodeSelector: {node-role.kubernetes.io/control-plane: ""}
  tolerations: [{key: node-role.kubernetes.io/control-plane, effect: NoSchedule}]
`,
			deployments: all,
			check: func(t *testing.T, _ *Rendered, ds map[string]*appsv1.Deployment) {
				a := ds["armada-operator"]
				if c := a.Spec.Template.Spec.Containers[0]; c.Image != "registry.example:5000/airship/armada-operator:v0.1.0" || *a.Spec.Replicas != 3 {
					t.Errorf("armada: image %q replicas %d", c.Image, *a.Spec.Replicas)
				}
				if c := ds["sip-operator"].Spec.Template.Spec.Containers[0]; c.Image != "registry.example:5000/airship/sip-operator@"+digest {
					t.Errorf("sip: image %q, want the digest", c.Image)
				}
				m := ds["metal3-operator"].Spec.Template.Spec
				if r := m.Containers[0].Resources; r.Requests.Cpu().String() != "250m" || r.Limits.Memory().String() != "1Gi" {
					t.Errorf("metal3 resources %+v", r)
				}
				if m.NodeSelector["node-role.kubernetes.io/control-plane"] != "" || len(m.NodeSelector) != 1 || len(m.Tolerations) != 1 || m.Tolerations[0].Effect != "NoSchedule" {
					t.Errorf("metal3 scheduling: %v %v", m.NodeSelector, m.Tolerations)
				}
				if ds["armada-operator"].Spec.Template.Spec.NodeSelector != nil {
					t.Error("armada got metal3's nodeSelector")
				}
				for name, d := range ds {
					pod := d.Spec.Template.Spec
					if pod.Containers[0].ImagePullPolicy != "IfNotPresent" || len(pod.ImagePullSecrets) != 1 || pod.ImagePullSecrets[0].Name != "regcred" {
						t.Errorf("%s: pull policy %q, secrets %v", name, pod.Containers[0].ImagePullPolicy, pod.ImagePullSecrets)
					}
				}
			},
		},
		{
			name:        "only SIP",
			values:      "install: {armada: false, metal3: false, promenade: false}",
			deployments: []string{"sip-operator"},
			check: func(t *testing.T, r *Rendered, _ map[string]*appsv1.Deployment) {
				for _, o := range r.Objects {
					if o.GetNamespace() != "" && o.GetNamespace() != "sip-system" || o.GetNamespace() == "" && !strings.HasPrefix(o.GetName(), "sip-") {
						t.Errorf("%s %s/%s installed with only SIP", o.GetKind(), o.GetNamespace(), o.GetName())
					}
				}
				// SIP watches BareMetalHosts: the CRDs do not follow the toggles.
				if len(r.CRDs) != 17 {
					t.Errorf("%d CRDs", len(r.CRDs))
				}
			},
		},
		{
			name:        "single namespace",
			values:      "singleNamespace: true",
			deployments: all,
			check: func(t *testing.T, r *Rendered, _ map[string]*appsv1.Deployment) {
				want := map[string]bool{}
				for _, o := range kustomized(t) {
					if kindOf(o) == "CustomResourceDefinition" || kindOf(o) == "Namespace" {
						continue
					}
					ns := namespaceOf(o)
					if ns != "" {
						ns = "airship-install"
					}
					want[key(kindOf(o), ns, nameOf(o))] = true
				}
				for _, o := range r.Objects {
					k := key(o.GetKind(), o.GetNamespace(), o.GetName())
					if !want[k] {
						t.Errorf("unexpected %s", k)
					}
					delete(want, k)
					if o.GetKind() == "ClusterRoleBinding" || o.GetKind() == "RoleBinding" {
						subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
						for _, s := range subjects {
							if ns := s.(map[string]any)["namespace"]; ns != "airship-install" {
								t.Errorf("%s: subject in namespace %v", o.GetName(), ns)
							}
						}
					}
				}
				for k := range want {
					t.Errorf("missing %s", k)
				}
				if !strings.Contains(r.Notes, "kubectl -n airship-install create secret tls promenade-api-tls") {
					t.Errorf("NOTES name another namespace:\n%s", r.Notes)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, values(t, tt.values))
			ds := deployments(t, r)
			var names []string
			for name, d := range ds {
				names = append(names, name)
				checkSecurity(t, d)
			}
			sort.Strings(names)
			want := append([]string(nil), tt.deployments...)
			sort.Strings(want)
			if d := cmp.Diff(want, names); d != "" {
				t.Fatalf("Deployments (-want +got):\n%s", d)
			}
			tt.check(t, r, ds)
		})
	}
}

// TestSchemaRejectsBadValues: the strict schema turns a misspelt or
// mistyped value into an error instead of a silently ignored setting.
func TestSchemaRejectsBadValues(t *testing.T) {
	chart, _ := paths(t)
	for _, tt := range []struct{ values, want string }{
		{"armada: {imag: {repository: x}}", "imag"},
		{"armada: {replicas: two}", "replicas"},
		{"armada: {replicas: -1}", "replicas"},
		{"sip: {image: {digest: latest}}", "digest"},
		{"imagePullPolicy: Sometimes", "imagePullPolicy"},
		{"install: {armada: yes-please}", "armada"},
		{"instal: {armada: false}", "instal"},
		{"armada: {extraArg: [--x]}", "extraArg"},
		{"metal3: {extraArgs: [2]}", "extraArgs"},
		{"metal3: {extraArgs: --provision-poll-interval=2s}", "extraArgs"},
		{"sip: {extraVolumes: [{emptyDir: {}}]}", "name"},
		{"sip: {extraVolumeMounts: [{name: x}]}", "mountPath"},
		{"sip: {extraVolume: []}", "extraVolume"},
		{"sip: {chartsVolume: {emptyDir: {}}}", "chartsVolume"},
		{"armada: {chartsVolume: {name: x}}", "chartsVolume"},
		{"armada: {chartsVolume: {emptyDir: {}, hostPath: {path: /x}}}", "chartsVolume"},
	} {
		t.Run(tt.values, func(t *testing.T) {
			_, err := Render(chart, "airship", "default", values(t, tt.values))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("values %s: error %v, want one naming %q", tt.values, err, tt.want)
			}
		})
	}
}

// TestGenerateRefuses: objects the chart could not carry faithfully stop
// the generator with the object's name.
func TestGenerateRefuses(t *testing.T) {
	deployment := func(mutate func(pod map[string]any)) map[string]any {
		container := map[string]any{"name": "manager", "image": "localhost/airship/sip-operator:latest",
			"resources": map[string]any{"requests": map[string]any{"cpu": "10m"}}}
		pod := map[string]any{"containers": []any{container}}
		if mutate != nil {
			mutate(pod)
		}
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "sip-operator", "namespace": "sip-system"},
			"spec":     map[string]any{"template": map[string]any{"spec": pod}}}
	}
	for _, tt := range []struct {
		name string
		objs []map[string]any
		want string
	}{
		{
			name: "an object of no operator",
			objs: []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "elsewhere"}}},
			want: "ConfigMap/elsewhere/x belongs to no operator",
		},
		{
			name: "two containers",
			objs: []map[string]any{deployment(func(pod map[string]any) {
				pod["containers"] = append(pod["containers"].([]any), map[string]any{"name": "sidecar"})
			})},
			want: "Deployment/sip-system/sip-operator: 2 containers",
		},
		{
			name: "a namespace named in an argument",
			objs: []map[string]any{deployment(func(pod map[string]any) {
				pod["containers"].([]any)[0].(map[string]any)["args"] = []any{"--watch-namespace=metal3-system"}
			})},
			want: "names namespace metal3-system",
		},
		{
			name: "a node selector the values would override",
			objs: []map[string]any{deployment(func(pod map[string]any) { pod["nodeSelector"] = map[string]any{"a": "b"} })},
			want: "nodeSelector",
		},
		{
			name: "an empty list the values would append to",
			objs: []map[string]any{deployment(func(pod map[string]any) { pod["containers"].([]any)[0].(map[string]any)["args"] = []any{} })},
			want: "Deployment/sip-system/sip-operator: container's args: an empty list",
		},
		{
			name: "a volume of the values that config/default lacks",
			objs: func() []map[string]any {
				d := deployment(nil)
				d["metadata"] = map[string]any{"name": "armada-operator", "namespace": "armada-system"}
				return []map[string]any{d}
			}(),
			want: "Deployment/armada-system/armada-operator: no volume charts, whose source the chart's value armada.chartsVolume sets",
		},
		{
			name: "an operator without a Deployment",
			objs: []map[string]any{deployment(nil)},
			want: "no Deployment armada-system/armada-operator",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(tt.objs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestWriteRemovesStaleFiles: a file the generator no longer makes goes.
func TestWriteRemovesStaleFiles(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "crds", "gone.example.com.yaml")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, map[string][]byte{"Chart.yaml": []byte("name: x\n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale CRD kept: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "Chart.yaml")); err != nil || string(data) != "name: x\n" {
		t.Errorf("Chart.yaml: %q %v", data, err)
	}
}

// TestIronicAsWritten: the chart installs Metal3's Ironic beside the
// metal3 operator as config/metal3/ironic writes it, in the release's
// namespace with singleNamespace, and not at all without the operator.
func TestIronicAsWritten(t *testing.T) {
	for _, tt := range []struct {
		values, namespace string
		want              bool
	}{
		{"", "metal3-system", true},
		{"singleNamespace: true", "airship-install", true},
		{"install: {metal3: false}", "", false},
	} {
		r := render(t, values(t, tt.values))
		var found *appsv1.Deployment
		for _, o := range r.Objects {
			if o.GetKind() == "Deployment" && o.GetName() == "ironic" {
				found = &appsv1.Deployment{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, found, true); err != nil {
					t.Fatal(err)
				}
			}
		}
		if (found != nil) != tt.want {
			t.Fatalf("values %q: Ironic installed %v, want %v", tt.values, found != nil, tt.want)
		}
		if found == nil {
			continue
		}
		if found.Namespace != tt.namespace {
			t.Errorf("values %q: Ironic in %q, want %q", tt.values, found.Namespace, tt.namespace)
		}
		pod := found.Spec.Template.Spec
		if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
			t.Errorf("Ironic's pod is not runAsNonRoot")
		}
		for _, c := range append(pod.InitContainers, pod.Containers...) {
			sc := c.SecurityContext
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
				t.Errorf("Ironic's container %s: security context %+v", c.Name, sc)
			}
		}
	}
}

// configDeployments are the operators' Deployments of config/default.
func configDeployments(t *testing.T) map[string]*appsv1.Deployment {
	t.Helper()
	out := map[string]*appsv1.Deployment{}
	for _, o := range kustomized(t) {
		if kindOf(o) != "Deployment" || nameOf(o) == "ironic" {
			continue
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(normal(t, o), &d, true); err != nil {
			t.Fatalf("Deployment %s: %v", nameOf(o), err)
		}
		out[d.Name] = &d
	}
	return out
}

// TestExtraArgsAndVolumes: extraArgs, extraVolumes and extraVolumeMounts
// are appended, in order, after config/default's, and armada.chartsVolume
// replaces the source of the volume charts; every other field of every
// Deployment stays as config/default has it.
func TestExtraArgsAndVolumes(t *testing.T) {
	container := func(d *appsv1.Deployment) *corev1.Container { return &d.Spec.Template.Spec.Containers[0] }
	hostPath := func(path string, typ corev1.HostPathType) corev1.VolumeSource {
		return corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &typ}}
	}
	chartsSource := func(d *appsv1.Deployment, src corev1.VolumeSource) {
		vols := d.Spec.Template.Spec.Volumes
		for i := range vols {
			if vols[i].Name == "charts" {
				vols[i].VolumeSource = src
			}
		}
	}
	promenadeCharts := corev1.Volume{Name: "promenade-charts", VolumeSource: hostPath("/opt/promenade/charts", corev1.HostPathDirectory)}
	promenadeMount := corev1.VolumeMount{Name: "promenade-charts", MountPath: "/promenade-charts", ReadOnly: true}
	tests := []struct {
		name, values string
		// want turns config/default's Deployments into the expected ones.
		want func(ds map[string]*appsv1.Deployment)
	}{
		{
			name: "defaults",
			want: func(map[string]*appsv1.Deployment) {},
		},
		{
			name: "extra args appended in order",
			values: `
metal3: {extraArgs: [--deploy-iso=http://10.88.0.1:6181/deploy.iso, --provision-poll-interval=2s]}
armada: {extraArgs: [--chart-mount=/opt/promenade/charts=/promenade-charts]}
sip: {extraArgs: [--z, --a, "--with-space=a b"]}
`,
			want: func(ds map[string]*appsv1.Deployment) {
				c := container(ds["metal3-operator"])
				c.Args = append(c.Args, "--deploy-iso=http://10.88.0.1:6181/deploy.iso", "--provision-poll-interval=2s")
				c = container(ds["armada-operator"])
				c.Args = append(c.Args, "--chart-mount=/opt/promenade/charts=/promenade-charts")
				c = container(ds["sip-operator"])
				c.Args = append(c.Args, "--z", "--a", "--with-space=a b")
			},
		},
		{
			name: "extra volumes and mounts appended",
			values: `
armada:
  extraVolumes: [{name: promenade-charts, hostPath: {path: /opt/promenade/charts, type: Directory}}]
  extraVolumeMounts: [{name: promenade-charts, mountPath: /promenade-charts, readOnly: true}]
sip:
  extraVolumes: [{name: b, emptyDir: {}}, {name: a, configMap: {name: site}}]
  extraVolumeMounts: [{name: b, mountPath: /b}, {name: a, mountPath: /a, readOnly: true}]
`,
			want: func(ds map[string]*appsv1.Deployment) {
				a := &ds["armada-operator"].Spec.Template.Spec
				a.Volumes = append(a.Volumes, promenadeCharts)
				a.Containers[0].VolumeMounts = append(a.Containers[0].VolumeMounts, promenadeMount)
				// config/default gives SIP no volume: the lists appear.
				s := &ds["sip-operator"].Spec.Template.Spec
				s.Volumes = append(s.Volumes,
					corev1.Volume{Name: "b", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					corev1.Volume{Name: "a", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "site"}}}})
				s.Containers[0].VolumeMounts = append(s.Containers[0].VolumeMounts,
					corev1.VolumeMount{Name: "b", MountPath: "/b"}, corev1.VolumeMount{Name: "a", MountPath: "/a", ReadOnly: true})
			},
		},
		{
			name:   "armada.chartsVolume hostPath replaces the emptyDir",
			values: "armada: {chartsVolume: {hostPath: {path: /opt/promenade/charts, type: Directory}}}",
			want: func(ds map[string]*appsv1.Deployment) {
				chartsSource(ds["armada-operator"], hostPath("/opt/promenade/charts", corev1.HostPathDirectory))
			},
		},
		{
			name: "armada.chartsVolume as a claim, with extra args, volumes and mounts",
			values: `
armada:
  chartsVolume: {persistentVolumeClaim: {claimName: charts, readOnly: true}}
  extraArgs: [--chart-mount=/opt/promenade/charts=/promenade-charts]
  extraVolumes: [{name: promenade-charts, hostPath: {path: /opt/promenade/charts, type: Directory}}]
  extraVolumeMounts: [{name: promenade-charts, mountPath: /promenade-charts, readOnly: true}]
`,
			want: func(ds map[string]*appsv1.Deployment) {
				a := ds["armada-operator"]
				chartsSource(a, corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "charts", ReadOnly: true}})
				pod := &a.Spec.Template.Spec
				pod.Volumes = append(pod.Volumes, promenadeCharts)
				pod.Containers[0].VolumeMounts = append(pod.Containers[0].VolumeMounts, promenadeMount)
				pod.Containers[0].Args = append(pod.Containers[0].Args, "--chart-mount=/opt/promenade/charts=/promenade-charts")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := configDeployments(t)
			if len(want) != len(Operators) {
				t.Fatalf("config/default has %d operator Deployments, want %d", len(want), len(Operators))
			}
			tt.want(want)
			got := deployments(t, render(t, values(t, tt.values)))
			if len(got) != len(want) {
				t.Errorf("%d Deployments rendered, want %d", len(got), len(want))
			}
			for name, w := range want {
				if got[name] == nil {
					t.Errorf("no Deployment %s", name)
					continue
				}
				if d := cmp.Diff(w, got[name]); d != "" {
					t.Errorf("%s (-want +got):\n%s", name, d)
				}
				checkSecurity(t, got[name])
			}
		})
	}
}
