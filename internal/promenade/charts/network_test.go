package charts

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/installchart"
	"github.com/airshipit/airship-go/internal/promenade/anchor"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

var update = flag.Bool("update", false, "rewrite testdata/groups.yaml and testdata/render/<chart>/expected.yaml from the actual output")

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s (-) and the output (+) differ (run with -update if intended):\n%s", path, d)
	}
}

// TestGroupsGolden: the ArmadaManifest's groups, in order, with their
// charts (testdata/groups.yaml, as Armada documents).
func TestGroupsGolden(t *testing.T) {
	vals := map[string]map[string]any{}
	for _, n := range Names() {
		vals[n] = map[string]any{}
	}
	objs, err := Manifest(vals, ManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The manifest and its groups; the charts carry the values.
	docs, err := Documents(objs[:1+len(Groups)])
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "groups.yaml"), docs)
}

// TestRenderGolden: kube-proxy and Calico rendered from fixed site values
// (testdata/render/<chart>/values.yaml, placeholder PEMs) are
// expected.yaml, notes included.
func TestRenderGolden(t *testing.T) {
	for _, chart := range []string{"kube-proxy", "calico"} {
		t.Run(chart, func(t *testing.T) {
			dir := filepath.Join("testdata", "render", chart)
			b, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := yaml.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			r := render(t, chart, v)
			golden(t, filepath.Join(dir, "expected.yaml"), []byte(r.Manifest+"\n# NOTES.txt\n"+r.Notes+"\n"))
		})
	}
}

// TestNetworkChartsRenderNothingWithoutCredentials: with their defaults
// (no certificate, no endpoints) kube-proxy and Calico install nothing
// that would crash on every node, and say why.
func TestNetworkChartsRenderNothingWithoutCredentials(t *testing.T) {
	for _, chart := range []string{"kube-proxy", "calico"} {
		r := render(t, chart, nil)
		if len(r.Objects) != 0 || !strings.Contains(r.Notes, "promenade charts-values") {
			t.Errorf("%s with its defaults: %d objects, notes %q", chart, len(r.Objects), r.Notes)
		}
	}
}

// TestNetworkValuesSchema: the kube-proxy and Calico values schemas take
// the site's values and refuse unknown keys at every level, values out of
// their enums and endpoints that are not https.
func TestNetworkValuesSchema(t *testing.T) {
	site, err := Values(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, chart string
		edit        func(v map[string]any)
		wantErr     string // "" renders
	}{
		{"kube-proxy site", "kube-proxy", func(map[string]any) {}, ""},
		{"kube-proxy unknown key", "kube-proxy", func(v map[string]any) { v["imagePullPolicy"] = "Always" }, "imagePullPolicy"},
		{"kube-proxy unknown tls key", "kube-proxy", func(v map[string]any) { v["tls"].(map[string]any)["crt"] = "x" }, "crt"},
		{"kube-proxy mode", "kube-proxy", func(v map[string]any) { v["mode"] = "userspace" }, "mode"},
		{"kube-proxy plain http", "kube-proxy", func(v map[string]any) { v["server"] = "http://127.0.0.1:6553" }, "server"},
		{"kube-proxy server injecting YAML", "kube-proxy", func(v map[string]any) { v["server"] = "https://127.0.0.1:6553\n    insecure-skip-tls-verify: true" }, "server"},
		{"kube-proxy image injecting YAML", "kube-proxy", func(v map[string]any) { v["image"] = "kube-proxy:v1\n        command: [sh]" }, "image"},
		{"kube-proxy cluster CIDR", "kube-proxy", func(v map[string]any) { v["clusterCIDR"] = "10.97.0.0/16\nmode: ipvs" }, "clusterCIDR"},
		{"kube-proxy nodeSelector value", "kube-proxy", func(v map[string]any) { v["nodeSelector"] = map[string]any{"a": 1} }, "nodeSelector"},
		{"calico site", "calico", func(map[string]any) {}, ""},
		{"calico unknown key", "calico", func(v map[string]any) { v["typha"] = map[string]any{} }, "typha"},
		{"calico unknown etcd key", "calico", func(v map[string]any) { v["etcd"].(map[string]any)["endpoint"] = "https://x:6666" }, "endpoint"},
		{"calico unknown image", "calico", func(v map[string]any) { v["images"] = map[string]any{"typha": "x"} }, "typha"},
		{"calico ipip", "calico", func(v map[string]any) { v["ipv4Pool"].(map[string]any)["ipip"] = "Sometimes" }, "ipip"},
		{"calico plain http endpoint", "calico", func(v map[string]any) {
			v["etcd"].(map[string]any)["endpoints"] = []any{"http://192.168.77.10:6666"}
		}, "endpoints"},
		{"calico endpoint with a comma", "calico", func(v map[string]any) {
			v["etcd"].(map[string]any)["endpoints"] = []any{"https://192.168.77.10:6666,https://evil:6666"}
		}, "endpoints"},
		{"calico image with a space", "calico", func(v map[string]any) { v["images"] = map[string]any{"node": "calico/node:v3 --evil"} }, "node"},
		{"calico pool", "calico", func(v map[string]any) { v["ipv4Pool"].(map[string]any)["cidr"] = "10.97.0.0/16 " }, "cidr"},
		{"calico port", "calico", func(v map[string]any) { v["apiServer"].(map[string]any)["port"] = 70000 }, "port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := plain(site[tc.chart])
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(v)
			_, err = installchart.Render(chartDir(tc.chart), "promenade-"+tc.chart, Namespace, v)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("site values refused: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("rendered; want the schema to refuse %s", tc.wantErr)
			case tc.wantErr != "" && (!strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %q does not name the schema and %q", err, tc.wantErr)
			}
		})
	}
}

// TestKubeProxyImage: kube-proxy follows the API server image's registry
// and tag; anything else gets the default.
func TestKubeProxyImage(t *testing.T) {
	for in, want := range map[string]string{
		"registry.k8s.io/kube-apiserver:v1.33.4":             "registry.k8s.io/kube-proxy:v1.33.4",
		"registry.example.com:5000/k8s/kube-apiserver:v1.34": "registry.example.com:5000/k8s/kube-proxy:v1.34",
		"kube-apiserver:v1.33.4":                             "kube-proxy:v1.33.4",
		"registry.example.com:5000/kube-apiserver":           DefaultKubeProxyImage,
		"registry.k8s.io/kube-apiserver@sha256:0123":         DefaultKubeProxyImage,
		"registry.k8s.io/kube-apiserver-amd64:v1.33.4":       DefaultKubeProxyImage,
		"registry.k8s.io/kube-apiserver:":                    DefaultKubeProxyImage,
		"kube-apiserver":                                     DefaultKubeProxyImage,
		"":                                                   DefaultKubeProxyImage,
	} {
		if got := KubeProxyImage(in); got != want {
			t.Errorf("KubeProxyImage(%q) = %q, want %q", in, got, want)
		}
	}
}

// typed converts a rendered object to its type.
func typed[T any](t *testing.T, objs map[string]*unstructured.Unstructured, key string) *T {
	t.Helper()
	o, ok := objs[key]
	if !ok {
		t.Fatalf("%s not rendered", key)
	}
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return out
}

// checkPair: cert is a certificate for cn that ca signed, and key is its key.
func checkPair(t *testing.T, what, caPEM, certPEM, keyPEM, cn string) {
	t.Helper()
	if _, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM)); err != nil {
		t.Errorf("%s: certificate and key do not match: %v", what, err)
	}
	block, _ := pem.Decode([]byte(certPEM))
	if block == nil {
		t.Fatalf("%s: no certificate", what)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(caPEM)) {
		t.Fatalf("%s: no CA", what)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("%s: certificate does not verify as a client of its CA: %v", what, err)
	}
	if cert.Subject.CommonName != cn {
		t.Errorf("%s: certificate for %q, want %q", what, cert.Subject.CommonName, cn)
	}
}

// mountOf is where the container mounts the volume of that name.
func mountOf(c corev1.Container, volume string) string {
	for _, m := range c.VolumeMounts {
		if m.Name == volume {
			return m.MountPath
		}
	}
	return ""
}

// checkEveryNode: a per-node DaemonSet on the host's network that
// tolerates every taint but stays off Nodes marked as not Promenade's.
func checkEveryNode(t *testing.T, ds *appsv1.DaemonSet) {
	t.Helper()
	spec := ds.Spec.Template.Spec
	if !spec.HostNetwork || spec.PriorityClassName != "system-node-critical" {
		t.Errorf("DaemonSet %s: hostNetwork %v, priority class %q", ds.Name, spec.HostNetwork, spec.PriorityClassName)
	}
	if d := cmp.Diff([]corev1.Toleration{{Operator: corev1.TolerationOpExists}}, spec.Tolerations); d != "" {
		t.Errorf("DaemonSet %s tolerations (-want +got):\n%s", ds.Name, d)
	}
	var terms []corev1.NodeSelectorTerm
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil && spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	want := []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: v1.AnchorsLabel, Operator: corev1.NodeSelectorOpNotIn, Values: []string{v1.AnchorsDisabled}}}}}
	if d := cmp.Diff(want, terms); d != "" {
		t.Errorf("DaemonSet %s node affinity (-want +got):\n%s", ds.Name, d)
	}
	if len(spec.NodeSelector) != 0 {
		t.Errorf("DaemonSet %s: node selector %v; it runs on every node", ds.Name, spec.NodeSelector)
	}
	if ds.Spec.Template.Annotations[anchor.ChecksumAnnotation] == "" {
		t.Errorf("DaemonSet %s: no checksum on its pod template", ds.Name)
	}
}

// TestKubeProxyChart: with the example site's values kube-proxy runs
// privileged on every node's network, with the control plane's version,
// and its kubeconfig, mounted from the chart's ConfigMap, reaches the
// node's HAProxy with the system:kube-proxy certificate mounted from the
// chart's Secret.
func TestKubeProxyChart(t *testing.T) {
	set := exampleSet(t)
	vals, err := Values(set)
	if err != nil {
		t.Fatal(err)
	}
	var net v1.KubernetesNetwork
	if err := set.One(v1.SchemaKubernetesNetwork, &net); err != nil {
		t.Fatal(err)
	}
	objs := byKind(render(t, "kube-proxy", vals["kube-proxy"]).Objects)
	ds := typed[appsv1.DaemonSet](t, objs, "DaemonSet/kube-proxy")
	cm := typed[corev1.ConfigMap](t, objs, "ConfigMap/kube-proxy")
	sec := typed[corev1.Secret](t, objs, "Secret/kube-proxy")
	checkEveryNode(t, ds)
	spec := ds.Spec.Template.Spec
	c := spec.Containers[0]
	if c.Image != "registry.k8s.io/kube-proxy:v1.33.4" {
		t.Errorf("image %s, want kube-proxy at the example's API server version", c.Image)
	}
	if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
		t.Errorf("kube-proxy is not privileged")
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Errorf("a service account token is mounted; the kubeconfig is kube-proxy's only credential")
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	if v := volumes["config"]; v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
		t.Fatalf("volume config is not ConfigMap %s: %+v", cm.Name, v)
	}
	if v := volumes["pki"]; v.Secret == nil || v.Secret.SecretName != sec.Name {
		t.Fatalf("volume pki is not Secret %s: %+v", sec.Name, v)
	}
	configDir, pkiDir := mountOf(c, "config"), mountOf(c, "pki")
	if !slices.Contains(c.Command, "--config="+configDir+"/config.yaml") {
		t.Errorf("command %v does not read %s/config.yaml", c.Command, configDir)
	}

	var cfg struct {
		ClientConnection struct{ Kubeconfig string } `json:"clientConnection"`
		ClusterCIDR      string                      `json:"clusterCIDR"`
		Mode             string                      `json:"mode"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.ClientConnection.Kubeconfig != configDir+"/kubeconfig.yaml" || cfg.ClusterCIDR != net.Kubernetes.PodCIDR || cfg.Mode != "iptables" {
		t.Errorf("KubeProxyConfiguration: kubeconfig %q (want %s/kubeconfig.yaml), clusterCIDR %q (want %s), mode %q",
			cfg.ClientConnection.Kubeconfig, configDir, cfg.ClusterCIDR, net.Kubernetes.PodCIDR, cfg.Mode)
	}
	kc, err := clientcmd.Load([]byte(cm.Data["kubeconfig.yaml"]))
	if err != nil {
		t.Fatal(err)
	}
	ctx := kc.Contexts[kc.CurrentContext]
	if ctx == nil {
		t.Fatalf("kubeconfig: no current context %q", kc.CurrentContext)
	}
	cluster, user := kc.Clusters[ctx.Cluster], kc.AuthInfos[ctx.AuthInfo]
	if want := fmt.Sprintf("https://127.0.0.1:%d", net.Kubernetes.HAProxyPort); cluster.Server != want {
		t.Errorf("kubeconfig server %s, want the node's HAProxy %s", cluster.Server, want)
	}
	file := func(path string) string {
		key, ok := strings.CutPrefix(path, pkiDir+"/")
		if !ok || sec.StringData[key] == "" {
			t.Errorf("kubeconfig names %s, which is no key of Secret %s mounted at %s", path, sec.Name, pkiDir)
		}
		return sec.StringData[key]
	}
	checkPair(t, "kube-proxy", file(cluster.CertificateAuthority), file(user.ClientCertificate), file(user.ClientKey), "system:kube-proxy")
	if ca := file(cluster.CertificateAuthority); ca != set.PEM(v1.SchemaCertificateAuthority, "kubernetes") {
		t.Errorf("kubeconfig's CA is not the site's kubernetes CA")
	}
}

// TestCalicoChart: with the example site's values calico-node runs
// privileged on every node's network, its datastore the Calico etcd
// members with the calico-node certificate its CA signed, the pool the
// site's pod CIDR; calico-kube-controllers runs with the controller
// managers; the CNI configuration is JSON; every ClusterRoleBinding binds a
// rendered ServiceAccount to a rendered ClusterRole.
func TestCalicoChart(t *testing.T) {
	set := exampleSet(t)
	vals, err := Values(set)
	if err != nil {
		t.Fatal(err)
	}
	var net v1.KubernetesNetwork
	if err := set.One(v1.SchemaKubernetesNetwork, &net); err != nil {
		t.Fatal(err)
	}
	r := render(t, "calico", vals["calico"])
	objs := byKind(r.Objects)
	ds := typed[appsv1.DaemonSet](t, objs, "DaemonSet/calico-node")
	kcd := typed[appsv1.Deployment](t, objs, "Deployment/calico-kube-controllers")
	sec := typed[corev1.Secret](t, objs, "Secret/calico-etcd-secrets")
	cm := typed[corev1.ConfigMap](t, objs, "ConfigMap/calico-config")
	checkEveryNode(t, ds)

	env := func(c corev1.Container) map[string]string {
		out := map[string]string{}
		for _, e := range c.Env {
			out[e.Name] = e.Value
		}
		return out
	}
	wantEndpoints := "https://192.168.77.10:6666" // Genesis n0, the example's one calico-etcd=enabled node
	checkEtcd := func(c corev1.Container) {
		t.Helper()
		e := env(c)
		if e["ETCD_ENDPOINTS"] != wantEndpoints {
			t.Errorf("%s: ETCD_ENDPOINTS %q, want %q", c.Name, e["ETCD_ENDPOINTS"], wantEndpoints)
		}
		if e["KUBERNETES_SERVICE_HOST"] != "127.0.0.1" || e["KUBERNETES_SERVICE_PORT"] != fmt.Sprint(net.Kubernetes.HAProxyPort) {
			t.Errorf("%s: API at %s:%s, want the node's HAProxy", c.Name, e["KUBERNETES_SERVICE_HOST"], e["KUBERNETES_SERVICE_PORT"])
		}
		dir := mountOf(c, "etcd-certs")
		for _, k := range []string{"ETCD_CA_CERT_FILE", "ETCD_CERT_FILE", "ETCD_KEY_FILE"} {
			if key, ok := strings.CutPrefix(e[k], dir+"/"); dir == "" || !ok || sec.StringData[key] == "" {
				t.Errorf("%s: %s=%s is no key of Secret %s mounted at %q", c.Name, k, e[k], sec.Name, dir)
			}
		}
	}
	node := ds.Spec.Template.Spec.Containers[0]
	checkEtcd(node)
	checkEtcd(kcd.Spec.Template.Spec.Containers[0])
	if e := env(node); e["DATASTORE_TYPE"] != "etcdv3" || e["CALICO_IPV4POOL_CIDR"] != net.Kubernetes.PodCIDR {
		t.Errorf("calico-node: datastore %q, pool %q (want etcdv3, %s)", e["DATASTORE_TYPE"], e["CALICO_IPV4POOL_CIDR"], net.Kubernetes.PodCIDR)
	}
	for _, c := range append([]corev1.Container{node}, ds.Spec.Template.Spec.InitContainers...) {
		if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
			t.Errorf("%s is not privileged", c.Name)
		}
	}
	if ic := ds.Spec.Template.Spec.InitContainers; len(ic) != 1 || ic[0].Name != "install-cni" || env(ic[0])["ETCD_ENDPOINTS"] != wantEndpoints ||
		mountOf(ic[0], "cni-net-dir") != "/host/etc/cni/net.d" || mountOf(ic[0], "cni-bin-dir") != "/host/opt/cni/bin" {
		t.Errorf("install-cni: %+v", ic)
	}
	checkPair(t, "calico-node", sec.StringData["etcd-ca"], sec.StringData["etcd-cert"], sec.StringData["etcd-key"], "calico-node")
	if sec.StringData["etcd-ca"] != set.PEM(v1.SchemaCertificateAuthority, "calico-etcd") {
		t.Errorf("etcd-ca is not the site's calico-etcd CA")
	}

	kspec := kcd.Spec.Template.Spec
	if !kspec.HostNetwork || kspec.NodeSelector["kubernetes-controller-manager"] != "enabled" || kspec.ServiceAccountName != "calico-kube-controllers" {
		t.Errorf("calico-kube-controllers: hostNetwork %v, node selector %v, service account %q", kspec.HostNetwork, kspec.NodeSelector, kspec.ServiceAccountName)
	}

	var cni struct {
		Plugins []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(cm.Data["cni_network_config"], "__CNI_MTU__", "0")), &cni); err != nil {
		t.Fatalf("cni_network_config is not JSON once install-cni sets the MTU: %v", err)
	}
	if len(cni.Plugins) == 0 || cni.Plugins[0]["type"] != "calico" || cni.Plugins[0]["datastore_type"] != "etcdv3" {
		t.Errorf("CNI plugins %v", cni.Plugins)
	}

	for k, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" {
			continue
		}
		role, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		if _, ok := objs["ClusterRole/"+role]; !ok {
			t.Errorf("%s binds ClusterRole %s, not rendered", k, role)
		}
		for _, s := range subjects {
			if name := s.(map[string]any)["name"].(string); objs["ServiceAccount/"+name] == nil {
				t.Errorf("%s binds ServiceAccount %s, not rendered", k, name)
			}
		}
	}
	for _, sa := range []string{ds.Spec.Template.Spec.ServiceAccountName, kspec.ServiceAccountName, "calico-cni-plugin"} {
		if objs["ClusterRoleBinding/promenade-calico-"+sa] == nil {
			t.Errorf("ServiceAccount %s is bound to no ClusterRole", sa)
		}
	}
}

// withLabel adds a dynamic label to the named KubernetesNode document.
func withLabel(t *testing.T, set *docset.Set, node, label string) {
	t.Helper()
	for i := range set.Documents {
		d := &set.Documents[i]
		if d.Schema != v1.SchemaKubernetesNode || d.Metadata.Name != node {
			continue
		}
		var data map[string]any
		if err := json.Unmarshal(d.Data, &data); err != nil {
			t.Fatal(err)
		}
		labels := data["labels"].(map[string]any)
		labels["dynamic"] = append(labels["dynamic"].([]any), label)
		raw, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		d.Data = raw
		return
	}
	t.Fatalf("no KubernetesNode %s", node)
}

// TestCalicoEndpointsAreTheAnchorsMembers: Calico's etcd endpoints are the
// calico-etcd anchor's members (its static pod's --initial-cluster), at the
// port that pod serves clients on, for the example site and with a second
// member.
func TestCalicoEndpointsAreTheAnchorsMembers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		label []string // KubernetesNodes to label calico-etcd=enabled
		want  []any
	}{
		{"genesis only", nil, []any{"https://192.168.77.10:6666"}},
		{"genesis and n2", []string{"n2"}, []any{"https://192.168.77.10:6666", "https://192.168.77.12:6666"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := exampleSet(t)
			for _, n := range tc.label {
				withLabel(t, set, n, "calico-etcd=enabled")
			}
			vals, err := Values(set)
			if err != nil {
				t.Fatal(err)
			}
			got := vals["calico"]["etcd"].(map[string]any)["endpoints"]
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("endpoints (-want +got):\n%s", d)
			}
			anchors, err := anchor.Objects(set)
			if err != nil {
				t.Fatal(err)
			}
			var fromAnchor []any
			for _, o := range anchors {
				cm, ok := o.(*corev1.ConfigMap)
				if !ok || cm.Name != "calico-etcd-anchor" {
					continue
				}
				var pod corev1.Pod
				if err := yaml.Unmarshal([]byte(cm.Data["calico-etcd.yaml.tmpl"]), &pod); err != nil {
					t.Fatal(err)
				}
				port, members := "", ""
				for _, a := range pod.Spec.Containers[0].Command {
					if v, ok := strings.CutPrefix(a, "--listen-client-urls=https://0.0.0.0:"); ok {
						port = v
					}
					if v, ok := strings.CutPrefix(a, "--initial-cluster="); ok {
						members = v
					}
				}
				for _, m := range strings.Split(members, ",") {
					_, url, _ := strings.Cut(m, "=")
					host := strings.TrimPrefix(url, "https://")
					host = host[:strings.LastIndex(host, ":")]
					fromAnchor = append(fromAnchor, "https://"+host+":"+port)
				}
			}
			if d := cmp.Diff(fromAnchor, got); d != "" {
				t.Errorf("endpoints and the calico-etcd anchor's members (-anchor +values) differ:\n%s", d)
			}
		})
	}
}

// TestNetworkValuesNeedTheirMaterial: without the system:kube-proxy or
// calico-node certificate, or without a calico-etcd node, Values fails and
// says what is missing.
func TestNetworkValuesNeedTheirMaterial(t *testing.T) {
	drop := func(schema, name string) func(*docset.Set) {
		return func(s *docset.Set) {
			s.Documents = slices.DeleteFunc(s.Documents, func(d docset.Document) bool { return d.Schema == schema && d.Metadata.Name == name })
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*docset.Set)
		want []string
	}{
		{"no proxy certificate", drop(v1.SchemaCertificate, "proxy"), []string{"deckhand/Certificate/v1 proxy"}},
		{"no calico-node key", drop(v1.SchemaCertificateKey, "calico-node"), []string{"deckhand/CertificateKey/v1 calico-node"}},
		{"neither", func(s *docset.Set) {
			drop(v1.SchemaCertificateKey, "proxy")(s)
			drop(v1.SchemaCertificate, "calico-node")(s)
		}, []string{"deckhand/CertificateKey/v1 proxy", "deckhand/Certificate/v1 calico-node", "generate-certs"}},
		{"no calico etcd", func(s *docset.Set) {
			for i := range s.Documents {
				if s.Documents[i].Schema == v1.SchemaGenesis {
					s.Documents[i].Data = bytes.ReplaceAll(s.Documents[i].Data, []byte(`"calico-etcd=enabled"`), []byte(`"calico-etcd=disabled"`))
				}
			}
		}, []string{"calico-etcd=enabled"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := exampleSet(t)
			tc.edit(set)
			_, err := Values(set)
			if err == nil {
				t.Fatal("Values succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestExampleRBACCoversChartRoles: Kubernetes lets the Armada operator
// create a ClusterRole only with permissions it holds itself, so the
// example site's operator RBAC (config/armada/rbac's release role and
// function/armada-rbac-promenade) covers every rule of every ClusterRole
// the charts render with the example site's values.
func TestExampleRBACCoversChartRoles(t *testing.T) {
	vals, err := Values(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	var held []rbacv1.PolicyRule
	for _, f := range []string{"config/armada/rbac/release_role.yaml", "examples/site/function/armada-rbac-promenade/rbac.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := installchart.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range objs {
			if o.GetKind() == "ClusterRole" {
				held = append(held, typed[rbacv1.ClusterRole](t, map[string]*unstructured.Unstructured{"r": o}, "r").Rules...)
			}
		}
	}
	if len(held) == 0 {
		t.Fatal("no operator rules read")
	}
	has := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	covered := func(group, resource, verb, name string) bool {
		for _, r := range held {
			if has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) && (len(r.ResourceNames) == 0 || (name != "" && slices.Contains(r.ResourceNames, name))) {
				return true
			}
		}
		return false
	}
	roles := 0
	for _, chart := range Names() {
		for _, o := range render(t, chart, vals[chart]).Objects {
			if o.GetKind() != "ClusterRole" {
				continue
			}
			roles++
			role := typed[rbacv1.ClusterRole](t, map[string]*unstructured.Unstructured{"r": o}, "r")
			for _, r := range role.Rules {
				names := r.ResourceNames
				if len(names) == 0 {
					names = []string{""}
				}
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						for _, v := range r.Verbs {
							for _, n := range names {
								if !covered(g, res, v, n) {
									t.Errorf("chart %s, ClusterRole %s grants %s %q/%s %s, which the operator does not hold", chart, role.Name, v, g, res, n)
								}
							}
						}
					}
				}
			}
		}
	}
	if roles < 5 { // CoreDNS's, the API's, Calico's three
		t.Errorf("%d ClusterRoles rendered", roles)
	}
}
