package builder

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/cryptotest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/promenade/certs"
	"github.com/airshipit/airship-go/internal/promenade/docset"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

var update = flag.Bool("update", false, "rewrite the golden scripts in testdata/golden")

// fixedNow is the clock of the golden material.
var fixedNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func exampleSources(t testing.TB) []docset.Source {
	t.Helper()
	files, err := filepath.Glob("../../../examples/site/promenade/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("example configuration: %v", err)
	}
	var out []docset.Source
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, docset.Source{Name: filepath.Base(f), Data: b})
	}
	return out
}

// exampleSet loads the example site with PKI generated from a fixed seed
// and clock, so every run produces the same material.
func exampleSet(t *testing.T, extra ...docset.Source) *docset.Set {
	t.Helper()
	return exampleSetFrom(t, append(exampleSources(t), extra...))
}

// armadaSources is the example site with a bootstrap Armada: the Genesis
// document names the manifest of testdata/armada and an armada-operator
// tarball.
func armadaSources(t *testing.T) []docset.Source {
	t.Helper()
	src := exampleSources(t)
	for i := range src {
		if src[i].Name == "Genesis.yaml" {
			data := strings.Replace(string(src[i].Data), "\n  hostname: n0\n", `
  armada:
    target_manifest: cluster-bootstrap
    chart_root: /opt/armada/site
    operator:
      tar_url: https://armada.example.invalid/armada-operator.tar.gz
      tar_path: armada-operator
  hostname: n0
`, 1)
			if data == string(src[i].Data) {
				t.Fatal("Genesis.yaml: no hostname line to add the armada section before")
			}
			src[i].Data = []byte(data)
		}
	}
	m, err := os.ReadFile("testdata/armada/manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return append(src, docset.Source{Name: "armada.yaml", Data: m})
}

func exampleSetFrom(t *testing.T, src []docset.Source) *docset.Set {
	t.Helper()
	cryptotest.SetGlobalRandom(t, 20260101)
	set, err := docset.LoadSources(src...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := certs.Generate(set, certs.Options{Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	pem, err := docset.MarshalYAML(res.Documents)
	if err != nil {
		t.Fatal(err)
	}
	set, err = docset.LoadSources(append(src, docset.Source{Name: "certificates.yaml", Data: pem})...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func buildExample(t *testing.T, opts Options) []Script {
	t.Helper()
	b, err := New(exampleSet(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := b.BuildAll()
	if err != nil {
		t.Fatal(err)
	}
	return scripts
}

func TestGoldenScripts(t *testing.T) {
	scripts := buildExample(t, Options{Validators: true})
	again := buildExample(t, Options{Validators: true})
	want := []string{"genesis.sh", "validate-genesis.sh", "remove-n0.sh", "join-n1.sh", "remove-n1.sh", "validate-n1.sh", "join-n2.sh", "remove-n2.sh", "validate-n2.sh", "join-n3.sh", "remove-n3.sh", "validate-n3.sh", "validate-cluster.sh"}
	if len(scripts) != len(want) {
		t.Fatalf("got %d scripts, want %v", len(scripts), want)
	}
	for i, s := range scripts {
		if s.Name != want[i] {
			t.Errorf("script %d is %s, want %s", i, s.Name, want[i])
		}
		if !bytes.Equal(s.Content, again[i].Content) {
			t.Errorf("%s differs between two builds with the same seed", s.Name)
		}
		golden := filepath.Join("testdata", "golden", s.Name)
		if *update {
			if err := os.WriteFile(golden, s.Content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		g, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(g, s.Content) {
			t.Errorf("%s differs from %s (run go test ./internal/promenade/builder -update after checking the change)", s.Name, golden)
		}
	}
}

func TestShellcheckClean(t *testing.T) {
	sc := testtool.Path(t, "shellcheck")
	dir := t.TempDir()
	scripts := buildExample(t, Options{Validators: true})
	// A join script with kubectl left in place renders differently.
	b, err := New(exampleSet(t), Options{LeaveKubectl: true})
	if err != nil {
		t.Fatal(err)
	}
	n := b.Nodes()[0]
	j, err := b.JoinScript(n)
	if err != nil {
		t.Fatal(err)
	}
	scripts = append(scripts, Script{"join-leave-kubectl.sh", j})
	// So does genesis with a bootstrap Armada.
	ab, err := New(exampleSetFrom(t, armadaSources(t)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := ab.GenesisScript()
	if err != nil {
		t.Fatal(err)
	}
	scripts = append(scripts, Script{"genesis-armada.sh", g})
	if err := WriteScripts(dir, scripts); err != nil {
		t.Fatal(err)
	}
	args := []string{"--severity=style", "--shell=bash"}
	for _, s := range scripts {
		args = append(args, filepath.Join(dir, s.Name))
	}
	out, err := exec.CommandContext(t.Context(), sc, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("shellcheck: %v\n%s", err, out)
	}
}

func filesByPath(files []File) map[string]File {
	m := map[string]File{}
	for _, f := range files {
		m[f.Path] = f
	}
	return m
}

func TestEmbeddedFiles(t *testing.T) {
	set := exampleSet(t)
	b, err := New(set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	gp, err := b.GenesisPayload()
	if err != nil {
		t.Fatal(err)
	}
	gs, err := b.GenesisScript()
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := ExtractPayload(gs)
	if err != nil {
		t.Fatal(err)
	}
	if len(embedded) != len(gp.Files) {
		t.Fatalf("embedded %d files, payload has %d", len(embedded), len(gp.Files))
	}
	for i, f := range embedded {
		w := gp.Files[i]
		if f.Path != w.Path || f.Mode != w.Mode || !bytes.Equal(f.Content, w.Content) || f.Symlink != w.Symlink {
			t.Errorf("embedded %s (mode %o) differs from payload %s (mode %o)", f.Path, f.Mode, w.Path, w.Mode)
		}
	}
	files := filesByPath(embedded)

	// Static pods of the genesis control plane.
	var g v1.Genesis
	if err := set.One(v1.SchemaGenesis, &g); err != nil {
		t.Fatal(err)
	}
	pods := map[string]string{
		"kube-apiserver": g.Images.Kubernetes.APIServer, "kube-controller-manager": g.Images.Kubernetes.ControllerManager,
		"kube-scheduler": g.Images.Kubernetes.Scheduler, "kubernetes-etcd": g.Images.Kubernetes.Etcd, "auxiliary-etcd": g.Images.Kubernetes.Etcd,
	}
	for name, image := range pods {
		f, ok := files[ManifestDir+"/"+name+".yaml"]
		if !ok {
			t.Errorf("no static pod %s", name)
			continue
		}
		var pod corev1.Pod
		if err := yaml.UnmarshalStrict(f.Content, &pod); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if pod.Name != name || pod.Spec.Containers[0].Image != image || !pod.Spec.HostNetwork {
			t.Errorf("%s: name %s image %s hostNetwork %v", name, pod.Name, pod.Spec.Containers[0].Image, pod.Spec.HostNetwork)
		}
	}
	// Both etcd members form one cluster on the genesis node.
	if !bytes.Contains(files[ManifestDir+"/auxiliary-etcd.yaml"].Content, []byte("--initial-cluster=n0=https://192.168.77.10:2380,auxiliary-0=https://192.168.77.10:22380")) {
		t.Error("auxiliary etcd is not in the genesis etcd cluster")
	}
	// Material is the generated material; private keys are 0600.
	for path, want := range map[string]string{
		PKIDir + "/apiserver.pem":                 set.PEM(v1.SchemaCertificate, "apiserver"),
		PKIDir + "/apiserver-key.pem":             set.PEM(v1.SchemaCertificateKey, "apiserver"),
		PKIDir + "/service-account-key.pem":       set.PEM(v1.SchemaPrivateKey, "service-account"),
		EtcdPKIDir + "/server.pem":                set.PEM(v1.SchemaCertificate, "kubernetes-etcd-n0"),
		EtcdPKIDir + "/peer-key.pem":              set.PEM(v1.SchemaCertificateKey, "kubernetes-etcd-n0-peer"),
		"/etc/kubernetes/kubelet/pki/kubelet.pem": set.PEM(v1.SchemaCertificate, "kubelet-n0"),
		"/etc/kubernetes/admin/pki/admin-key.pem": set.PEM(v1.SchemaCertificateKey, "admin"),
	} {
		f, ok := files[path]
		if !ok || string(f.Content) != want || want == "" {
			t.Errorf("%s does not hold the generated material", path)
			continue
		}
		if strings.HasSuffix(path, "-key.pem") && f.Mode != 0o600 {
			t.Errorf("%s: mode %o, want 0600", path, f.Mode)
		}
	}
	var cd v1.Containerd
	if err := set.One(v1.SchemaContainerd, &cd); err != nil {
		t.Fatal(err)
	}
	if string(files["/etc/containerd/config.toml"].Content) != cd.Config {
		t.Error("containerd config differs from the Containerd document")
	}
	var kc map[string]any
	if err := yaml.Unmarshal(files["/etc/kubernetes/kubelet/config.yaml"].Content, &kc); err != nil {
		t.Fatal(err)
	}
	if kc["maxPods"] != float64(150) || kc["clusterDomain"] != "cluster.local" || kc["staticPodPath"] != ManifestDir {
		t.Errorf("kubelet config %v", kc)
	}
	if !strings.Contains(string(files["/etc/apt/apt.conf.d/49promenade-proxy"].Content), "http://proxy.example.com:8080") {
		t.Error("apt proxy not configured")
	}
	if !strings.Contains(string(files[EncryptionCfg].Content), "secretbox") {
		t.Error("encryption config missing")
	}
	if _, ok := files["/etc/logrotate.d/json-logrotate"]; !ok {
		t.Error("HostSystem file missing")
	}
	if _, ok := files["/var/lib/anchor/calico-etcd-bootstrap"]; !ok {
		t.Error("Genesis file missing")
	}

	// Join scripts carry no control-plane material but HAProxy in front of the API servers.
	n := b.Nodes()[1]
	js, err := b.JoinScript(n)
	if err != nil {
		t.Fatal(err)
	}
	jfiles, err := ExtractPayload(js)
	if err != nil {
		t.Fatal(err)
	}
	jm := filesByPath(jfiles)
	if _, ok := jm[PKIDir+"/apiserver-key.pem"]; ok {
		t.Error("join script carries the apiserver key")
	}
	if _, ok := jm[ManifestDir+"/kube-apiserver.yaml"]; ok {
		t.Error("join script carries the apiserver static pod")
	}
	if string(jm["/etc/kubernetes/kubelet/pki/kubelet.pem"].Content) != set.PEM(v1.SchemaCertificate, "kubelet-"+n.Hostname) {
		t.Error("join kubelet certificate is not the node's")
	}
	if !strings.Contains(string(jm["/etc/kubernetes/haproxy/haproxy.cfg"].Content), "server s0 192.168.77.10:6443") {
		t.Errorf("haproxy.cfg:\n%s", jm["/etc/kubernetes/haproxy/haproxy.cfg"].Content)
	}
}

// TestExtractFlag unpacks the embedded files with the script itself, as a
// normal user, and compares them with the payload.
func TestExtractFlag(t *testing.T) {
	bash := testtool.Path(t, "bash")
	scripts := buildExample(t, Options{})
	dir := t.TempDir()
	if err := WriteScripts(dir, scripts); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "root")
	if b, err := exec.CommandContext(t.Context(), bash, filepath.Join(dir, "genesis.sh"), "--extract", out).CombinedOutput(); err != nil {
		t.Fatalf("--extract: %v\n%s", err, b)
	}
	embedded, err := ExtractPayload(scripts[0].Content)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range embedded {
		p := filepath.Join(out, f.Path)
		if f.Symlink != "" {
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			continue
		}
		fi, _ := os.Stat(p)
		if !bytes.Equal(got, f.Content) || int64(fi.Mode().Perm()) != f.Mode {
			t.Errorf("%s: extracted content or mode (%v) differs (want %o)", f.Path, fi.Mode().Perm(), f.Mode)
		}
	}
}

func TestBadConfigurations(t *testing.T) {
	node := func(body string) docset.Source {
		return docset.Source{Name: "extra.yaml", Data: []byte(body)}
	}
	t.Run("node without an IP", func(t *testing.T) {
		_, err := docset.LoadSources(append(exampleSources(t), node(`
schema: promenade/KubernetesNode/v1
metadata: {schema: metadata/Document/v1, name: n9}
data: {hostname: n9}
`))...)
		if err == nil || !strings.Contains(err.Error(), "extra.yaml: promenade/KubernetesNode/v1 n9: /data: missing property 'ip'") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("duplicate hostname", func(t *testing.T) {
		_, err := New(exampleSet(t, node(`
schema: promenade/KubernetesNode/v1
metadata: {schema: metadata/Document/v1, name: n1-again}
data: {hostname: n1, ip: 192.168.77.99}
`)), Options{})
		if err == nil || !strings.Contains(err.Error(), `hostname "n1" is also used`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("no certificates", func(t *testing.T) {
		set, err := docset.LoadSources(exampleSources(t)...)
		if err != nil {
			t.Fatal(err)
		}
		b, err := New(set, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.BuildAll()
		if err == nil || !strings.Contains(err.Error(), "run promenade generate-certs") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("node without a catalog certificate gets one from the CA", func(t *testing.T) {
		set := exampleSet(t)
		b, err := New(set, Options{})
		if err != nil {
			t.Fatal(err)
		}
		extra := docset.Node{Name: "n7", KubernetesNode: v1.KubernetesNode{Hostname: "n7", IP: "192.168.77.17"}}
		s, err := b.JoinScript(extra)
		if err != nil {
			t.Fatal(err)
		}
		files, err := ExtractPayload(s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(filesByPath(files)["/etc/kubernetes/kubelet/pki/kubelet.pem"].Content, []byte("BEGIN CERTIFICATE")) {
			t.Error("no kubelet certificate issued")
		}
	})
}
