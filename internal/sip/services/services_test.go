package services

import (
	"bytes"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/strictyaml"
)

var update = flag.Bool("update", false, "rewrite testdata/<case>/expected.yaml from the actual output")

// testInput is the file form of Inputs (testdata/<case>/input.yaml).
type testInput struct {
	Cluster *sipv1.SIPCluster   `json:"cluster"`
	Hosts   []testHost          `json:"hosts,omitempty"`
	SSHKeys []map[string]string `json:"sshKeys,omitempty"`
	// ConnectorSecrets: Secret name -> key -> value, resourceVersion "1".
	ConnectorSecrets map[string]map[string]string `json:"connectorSecrets,omitempty"`
}

type testHost struct {
	Name        string            `json:"name"`
	Role        sipv1.BMHRole     `json:"role"`
	Standby     bool              `json:"standby,omitempty"`
	IPs         map[string]string `json:"ips,omitempty"`
	BMCAddress  string            `json:"bmcAddress,omitempty"`
	BMCUsername string            `json:"bmcUsername,omitempty"`
	BMCPassword string            `json:"bmcPassword,omitempty"`
}

var cases = []string{"full", "multiple", "minimal"}

// loadInputs reads testdata/<name>/input.yaml.
func loadInputs(t testing.TB, name string) Inputs {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ti testInput
	if err := strictyaml.Unmarshal(data, &ti); err != nil {
		t.Fatalf("testdata/%s/input.yaml: %v", name, err)
	}
	in := Inputs{Cluster: ti.Cluster}
	for _, h := range ti.Hosts {
		in.Hosts = append(in.Hosts, Host(h))
	}
	for _, keys := range ti.SSHKeys {
		m := map[string][]byte{}
		for k, v := range keys {
			m[k] = []byte(v)
		}
		in.SSHKeys = append(in.SSHKeys, m)
	}
	for name, keys := range ti.ConnectorSecrets {
		if in.ConnectorSecrets == nil {
			in.ConnectorSecrets = map[string]*corev1.Secret{}
		}
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ti.Cluster.Namespace, Name: name, ResourceVersion: "1"}, Data: map[string][]byte{}}
		for k, v := range keys {
			sec.Data[k] = []byte(v)
		}
		in.ConnectorSecrets[name] = sec
	}
	return in
}

// built is Build's output for a case.
type built struct {
	Objects  []client.Object       `json:"objects"`
	Services []sipv1.ServiceStatus `json:"services"`
	OIDC     *sipv1.OIDCStatus     `json:"oidc,omitempty"`
}

func build(t testing.TB, in Inputs) built {
	t.Helper()
	objs, svcs, oidc, err := Build(in)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return built{objs, svcs, oidc}
}

// TestBuildGolden compares Build's output for each case with
// testdata/<case>/expected.yaml; -update rewrites it.
func TestBuildGolden(t *testing.T) {
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := yaml.Marshal(build(t, loadInputs(t, name)))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name, "expected.yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestBuildGolden -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs (-want +got; -update rewrites it):\n%s", path, diff)
			}
		})
	}
}

// TestBuildDeterministic: the same inputs, in any host order, give the same
// objects, so applying them again changes nothing.
func TestBuildDeterministic(t *testing.T) {
	in := loadInputs(t, "full")
	first, _ := yaml.Marshal(build(t, in))
	slices.Reverse(in.Hosts)
	second, _ := yaml.Marshal(build(t, in))
	if !bytes.Equal(first, second) {
		t.Errorf("the output depends on the order of the hosts:\n%s", cmp.Diff(string(first), string(second)))
	}
}

func TestBuildNamesLabelsOwners(t *testing.T) {
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			in := loadInputs(t, name)
			b := build(t, in)
			c := in.Cluster
			names := ServiceNames(c)
			var statusNames []string
			for _, s := range b.Services {
				statusNames = append(statusNames, s.Name)
				if s.Ready {
					t.Errorf("service %s is ready before the controller looked", s.Name)
				}
			}
			if !slices.Equal(names, statusNames) {
				t.Errorf("ServiceNames = %v, statuses name %v", names, statusNames)
			}
			kinds := map[string][]string{} // service -> kinds of its objects
			for _, o := range b.Objects {
				kind := o.GetObjectKind().GroupVersionKind().Kind
				svc := o.GetLabels()[ServiceLabel]
				id := kind + " " + o.GetName()
				if !slices.Contains(names, svc) {
					t.Errorf("%s: label %s=%q names no service of %v", id, ServiceLabel, svc, names)
				}
				if got := o.GetLabels()[sipv1.ClusterNameLabel]; got != c.Name {
					t.Errorf("%s: label %s=%q, want %q", id, sipv1.ClusterNameLabel, got, c.Name)
				}
				if o.GetNamespace() != c.Namespace {
					t.Errorf("%s: namespace %q, want %q", id, o.GetNamespace(), c.Namespace)
				}
				refs := o.GetOwnerReferences()
				if len(refs) != 1 || refs[0].UID != c.UID || refs[0].Kind != "SIPCluster" || refs[0].Name != c.Name ||
					refs[0].APIVersion != sipv1.GroupVersion.String() || refs[0].Controller == nil || !*refs[0].Controller {
					t.Errorf("%s: owner references %+v, want the SIPCluster as controller", id, refs)
				}
				want := svc
				if kind == "Secret" && strings.HasPrefix(svc, namePrefix[TypeJumpHost]) {
					want = bmcSecretName(svc)
				}
				if o.GetName() != want {
					t.Errorf("%s: name, want %s", id, want)
				}
				kinds[svc] = append(kinds[svc], kind)
				switch o := o.(type) {
				case *appsv1.Deployment:
					checkDeployment(t, o, b.Objects)
				case *corev1.Service:
					if o.Spec.Type != corev1.ServiceTypeNodePort || !cmp.Equal(o.Spec.Selector, map[string]string{sipv1.ClusterNameLabel: c.Name, ServiceLabel: svc}) {
						t.Errorf("%s: type %s, selector %v", id, o.Spec.Type, o.Spec.Selector)
					}
				}
			}
			for _, n := range names {
				// Dex's configuration is a Secret; the others' a ConfigMap.
				config := "ConfigMap"
				if strings.HasPrefix(n, namePrefix[TypeAuth]) {
					config = "Secret"
				}
				for _, k := range []string{config, "Deployment", "Service"} {
					if !slices.Contains(kinds[n], k) {
						t.Errorf("service %s has no %s (has %v)", n, k, kinds[n])
					}
				}
				if errs := validation.IsDNS1035Label(n); len(errs) > 0 {
					t.Errorf("service name %q: %v", n, errs)
				}
			}
		})
	}
}

// TestBuildTolerations: a service's tolerations go into its pods, copied;
// a service without them has pods without them.
func TestBuildTolerations(t *testing.T) {
	in := loadInputs(t, "full")
	s := &in.Cluster.Spec.Services
	lbTolerations := []corev1.Toleration{
		{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "sip", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
	authTolerations := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	s.LoadBalancerControlPlane[0].Tolerations = slices.Clone(lbTolerations)
	s.Auth[0].Tolerations = slices.Clone(authTolerations)
	b := build(t, in)
	// The spec changed after the build leaves the Deployment as it was.
	s.LoadBalancerControlPlane[0].Tolerations[0].Key = "changed"

	want := map[string][]corev1.Toleration{
		"loadbalancer-controlplane-tenant-a-0": lbTolerations,
		"auth-tenant-a-0":                      authTolerations,
	}
	deployments := all[*appsv1.Deployment](b.Objects)
	if len(deployments) != len(ServiceNames(in.Cluster)) {
		t.Fatalf("%d Deployments, want one per service %v", len(deployments), ServiceNames(in.Cluster))
	}
	for _, d := range deployments {
		got := d.Spec.Template.Spec.Tolerations
		if diff := cmp.Diff(want[d.Name], got); diff != "" {
			t.Errorf("Deployment %s: tolerations (-want +got):\n%s", d.Name, diff)
		}
	}
}

// checkDeployment checks what every pod of a service has: its labels
// selected, the hash of its ConfigMap, requests, a readiness probe on the
// Service's port, the service's nodeLabels.
func checkDeployment(t *testing.T, d *appsv1.Deployment, objs []client.Object) {
	t.Helper()
	sel := d.Spec.Selector.MatchLabels
	if !cmp.Equal(sel, d.Spec.Template.Labels) || sel[ServiceLabel] != d.Name {
		t.Errorf("Deployment %s: selector %v, template labels %v", d.Name, sel, d.Spec.Template.Labels)
	}
	if strings.HasPrefix(d.Name, namePrefix[TypeAuth]) {
		// Dex's configuration is a Secret, hashed without the secrets'
		// values (TestDexConfigHash).
		if len(d.Spec.Template.Annotations[ConfigHashAnnotation]) != 64 {
			t.Errorf("Deployment %s: no %s", d.Name, ConfigHashAnnotation)
		}
	} else {
		cm := find[*corev1.ConfigMap](t, objs, d.Name)
		if got, want := d.Spec.Template.Annotations[ConfigHashAnnotation], configHash(cm.Data); got != want {
			t.Errorf("Deployment %s: %s = %q, want the hash of its ConfigMap %q", d.Name, ConfigHashAnnotation, got, want)
		}
	}
	svc := find[*corev1.Service](t, objs, d.Name)
	main := d.Spec.Template.Spec.Containers[0]
	if p := main.ReadinessProbe; p == nil || p.TCPSocket == nil || p.TCPSocket.Port.IntVal != svc.Spec.Ports[0].TargetPort.IntVal {
		t.Errorf("Deployment %s: readiness probe %+v, want a TCP check of port %d", d.Name, p, svc.Spec.Ports[0].TargetPort.IntVal)
	}
	for _, c := range append(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers...) {
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			t.Errorf("Deployment %s: container %s has no resource requests", d.Name, c.Name)
		}
	}
	if a := d.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("Deployment %s mounts a service account token", d.Name)
	}
}

// find returns the object of type T named name.
func find[T client.Object](t testing.TB, objs []client.Object, name string) T {
	t.Helper()
	for _, o := range objs {
		if o, ok := o.(T); ok && o.GetName() == name {
			return o
		}
	}
	var zero T
	t.Fatalf("no %T named %s", zero, name)
	return zero
}

func all[T client.Object](objs []client.Object) []T {
	var out []T
	for _, o := range objs {
		if o, ok := o.(T); ok {
			out = append(out, o)
		}
	}
	return out
}

// TestBuildKeepsSecretsOutOfConfigMaps scans every ConfigMap, and every
// Deployment, for every BMC password and node key; the BMC credentials are
// in the Secret, and Dex's client secrets are named, never written.
func TestBuildKeepsSecretsOutOfConfigMaps(t *testing.T) {
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			in := loadInputs(t, name)
			b := build(t, in)
			var secrets []string
			for _, sec := range in.ConnectorSecrets {
				for _, v := range sec.Data {
					secrets = append(secrets, string(v))
				}
			}
			for _, h := range in.Hosts {
				secrets = append(secrets, h.BMCPassword)
			}
			for _, keys := range in.SSHKeys {
				for k, v := range keys {
					if !strings.HasSuffix(k, ".pub") {
						secrets = append(secrets, strings.Split(string(v), "\n")[1])
					}
				}
			}
			for _, o := range b.Objects {
				if _, ok := o.(*corev1.Secret); ok {
					continue
				}
				text, err := yaml.Marshal(o)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range secrets {
					if strings.Contains(string(text), s) {
						t.Errorf("%T %s holds the secret %q", o, o.GetName(), s)
					}
				}
			}
			for _, h := range in.Hosts {
				for _, jh := range all[*corev1.Secret](b.Objects) {
					if !strings.HasPrefix(jh.Name, namePrefix[TypeJumpHost]) {
						continue
					}
					if string(jh.Data[h.Name+".password"]) != h.BMCPassword || string(jh.Data[h.Name+".username"]) != h.BMCUsername {
						t.Errorf("Secret %s lacks the BMC credentials of %s", jh.Name, h.Name)
					}
				}
			}
			for _, sec := range all[*corev1.Secret](b.Objects) {
				cfg, ok := sec.Data[dexConfigKey]
				if !ok {
					continue
				}
				if !strings.Contains(string(cfg), "secretEnv:") || strings.Contains(string(cfg), "secret:") {
					t.Errorf("Secret %s: Dex clients must name their secret by secretEnv and hold none:\n%s", sec.Name, cfg)
				}
			}
		})
	}
}

// haproxyServers parses a rendered configuration: backend -> its servers'
// "name address".
func haproxyServers(cfg string) map[string][]string {
	out := map[string][]string{}
	backend := ""
	for _, line := range strings.Split(cfg, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "backend":
			backend = f[1]
			out[backend] = []string{}
		case len(f) == 0 || !strings.HasPrefix(line, " "):
			backend = ""
		case f[0] == "server" && backend != "":
			out[backend] = append(out[backend], f[1]+" "+f[2])
		}
	}
	return out
}

func TestBuildLoadBalancerBackends(t *testing.T) {
	tests := []struct {
		name, kase, lb string
		want           map[string][]string
	}{
		{
			name: "control plane: active hosts only, port 6443",
			kase: "full", lb: "loadbalancer-controlplane-tenant-a-0",
			want: map[string][]string{"kube-apiserver": {"node01 10.23.0.1:6443", "node02 10.23.0.2:6443", "node03 10.23.0.3:6443"}},
		},
		{
			name: "workers: one backend per port of the range",
			kase: "full", lb: "loadbalancer-worker-tenant-a-0",
			want: map[string][]string{
				"port-30002": {"node05 10.23.0.5:30002", "node06 10.23.0.6:30002"},
				"port-30003": {"node05 10.23.0.5:30003", "node06 10.23.0.6:30003"},
				"port-30004": {"node05 10.23.0.5:30004", "node06 10.23.0.6:30004"},
			},
		},
		{
			name: "IPv6 addresses in brackets",
			kase: "multiple", lb: ServiceNames(loadInputs(t, "multiple").Cluster)[0],
			want: map[string][]string{"kube-apiserver": {"cp-1 [fd00:24::1]:6443", "cp-2 [fd00:24::2]:6443"}},
		},
		{
			name: "the second load balancer uses its own interface",
			kase: "multiple", lb: ServiceNames(loadInputs(t, "multiple").Cluster)[1],
			want: map[string][]string{"kube-apiserver": {"cp-1 10.24.0.1:6443", "cp-2 10.24.0.2:6443"}},
		},
		{
			name: "no host: an empty backend",
			kase: "minimal", lb: "loadbalancer-controlplane-tenant-c-0",
			want: map[string][]string{"kube-apiserver": {}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := build(t, loadInputs(t, tt.kase))
			cm := find[*corev1.ConfigMap](t, b.Objects, tt.lb)
			got := haproxyServers(cm.Data[haproxyConfigKey])
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("backends (-want +got):\n%s", diff)
			}
			svc := find[*corev1.Service](t, b.Objects, tt.lb)
			var ports []string
			for _, p := range svc.Spec.Ports {
				ports = append(ports, p.Name)
			}
			if !cmp.Equal(ports, slices.Sorted(maps.Keys(tt.want))) {
				t.Errorf("Service ports %v, want one per frontend %v", ports, slices.Sorted(maps.Keys(tt.want)))
			}
		})
	}
}

func TestBuildServicePorts(t *testing.T) {
	b := build(t, loadInputs(t, "full"))
	tests := []struct {
		svc       string
		clusterIP string
		want      []corev1.ServicePort
	}{
		{"loadbalancer-controlplane-tenant-a-0", "", []corev1.ServicePort{servicePort("kube-apiserver", 6443, 30001)}},
		{"loadbalancer-worker-tenant-a-0", "10.96.0.42", []corev1.ServicePort{
			servicePort("port-30002", 30002, 30002), servicePort("port-30003", 30003, 30003), servicePort("port-30004", 30004, 30004),
		}},
		{"jumphost-tenant-a-0", "", []corev1.ServicePort{servicePort("ssh", 22, 30000)}},
		{"auth-tenant-a-0", "", []corev1.ServicePort{servicePort("http", 5556, 30005)}},
	}
	for _, tt := range tests {
		t.Run(tt.svc, func(t *testing.T) {
			s := find[*corev1.Service](t, b.Objects, tt.svc)
			if diff := cmp.Diff(tt.want, s.Spec.Ports); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
			if s.Spec.ClusterIP != tt.clusterIP {
				t.Errorf("clusterIP %q, want %q", s.Spec.ClusterIP, tt.clusterIP)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name   string
		change func(in *Inputs)
		want   []string // each in the error
	}{
		{
			name:   "active control-plane host without the interface",
			change: func(in *Inputs) { delete(in.Hosts[1].IPs, "oam-ipv4") },
			want:   []string{`"node02"`, "spec.services.loadBalancerControlPlane[0].nodeInterfaceId", `"oam-ipv4"`, "spec.services.jumpHost[0].nodeInterfaceId"},
		},
		{
			name:   "standby host without the interface: only the jump host needs it",
			change: func(in *Inputs) { delete(in.Hosts[3].IPs, "oam-ipv4") },
			want:   []string{`"node04"`, "spec.services.jumpHost[0].nodeInterfaceId"},
		},
		{
			name:   "worker without the interface",
			change: func(in *Inputs) { in.Hosts[4].IPs = nil },
			want:   []string{`"node05"`, "spec.services.loadBalancerWorker[0].nodeInterfaceId"},
		},
		{
			name:   "an address that is no IP",
			change: func(in *Inputs) { in.Hosts[0].IPs["oam-ipv4"] = "10.23.0.1/24" },
			want:   []string{`"node01"`, `"10.23.0.1/24"`, "not an IP address"},
		},
		{
			name:   "a BMC address of an unsupported scheme",
			change: func(in *Inputs) { in.Hosts[2].BMCAddress = "ipmi://10.23.1.3" },
			want:   []string{`"node03"`, "spec.services.jumpHost[0]", "spec.bmc.address", "ipmi"},
		},
		{
			name:   "an invalid spec",
			change: func(in *Inputs) { in.Cluster.Spec.Services.JumpHost[0].NodePort = 22 },
			want:   []string{"spec.services.jumpHost[0].nodePort"},
		},
		{
			name:   "a cluster name too long for a label",
			change: func(in *Inputs) { in.Cluster.Name = strings.Repeat("a", 64) },
			want:   []string{"metadata.name", sipv1.ClusterNameLabel},
		},
		{
			name:   "no cluster",
			change: func(in *Inputs) { in.Cluster = nil },
			want:   []string{"no SIPCluster"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := loadInputs(t, "full")
			tt.change(&in)
			objs, svcs, oidc, err := Build(in)
			if err == nil {
				t.Fatal("Build succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if objs != nil || svcs != nil || oidc != nil {
				t.Error("Build returned objects with an error")
			}
			for _, h := range in.Hosts {
				if strings.Contains(err.Error(), h.BMCPassword) {
					t.Errorf("error %q holds a BMC password", err)
				}
			}
		})
	}
}

func TestBuildJumpHostWithoutKeys(t *testing.T) {
	tests := []struct {
		name    string
		keys    []map[string][]byte
		message string
	}{
		{"Secret absent", nil, `Secret "tenant-a-node-keys" (spec.services.jumpHost[0].nodeSSHPrivateKeys) not found`},
		{"no private key in it", []map[string][]byte{{"id_ed25519.pub": []byte("ssh-ed25519 AAAA")}}, "holds no SSH private key"},
		{"keys", loadInputs(t, "full").SSHKeys, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := loadInputs(t, "full")
			in.SSHKeys = tt.keys
			b := build(t, in)
			var st sipv1.ServiceStatus
			for _, s := range b.Services {
				if s.Type == TypeJumpHost {
					st = s
				}
			}
			if !strings.Contains(st.Message, tt.message) || (tt.message == "") != (st.Message == "") {
				t.Errorf("message %q, want %q", st.Message, tt.message)
			}
			cfg := find[*corev1.ConfigMap](t, b.Objects, st.Name).Data[keySSHConfig]
			if got := strings.Contains(cfg, "  IdentityFile "); got != (tt.message == "") {
				t.Errorf("IdentityFile in the SSH config: %v:\n%s", got, cfg)
			}
		})
	}
}

func TestServiceNames(t *testing.T) {
	tests := []struct {
		cluster string
		want    []string // of the first control-plane LB, its second, the jump host
	}{
		{"tenant-a", []string{"loadbalancer-controlplane-tenant-a-0", "loadbalancer-controlplane-tenant-a-1", "jumphost-tenant-a-0"}},
		{"tenant-a-1", []string{"loadbalancer-controlplane-tenant-a-1-0", "loadbalancer-controlplane-tenant-a-1-1", "jumphost-tenant-a-1-0"}},
		{"Tenant.B", nil},
		{"1tenant", []string{"loadbalancer-controlplane-1tenant-0", "loadbalancer-controlplane-1tenant-1", "jumphost-1tenant-0"}},
		{strings.Repeat("long", 15), nil},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.cluster, func(t *testing.T) {
			c := &sipv1.SIPCluster{}
			c.Name = tt.cluster
			s := &c.Spec.Services
			s.LoadBalancerControlPlane = make([]sipv1.LoadBalancerServiceControlPlane, 2)
			s.JumpHost = make([]sipv1.JumpHostService, 1)
			got := ServiceNames(c)
			if tt.want != nil && !slices.Equal(got, tt.want) {
				t.Errorf("ServiceNames = %v, want %v", got, tt.want)
			}
			for _, n := range got {
				if errs := validation.IsDNS1035Label(n); len(errs) > 0 {
					t.Errorf("%q: %v", n, errs)
				}
				if other, ok := seen[n]; ok {
					t.Errorf("%q names a service of %q and of %q", n, other, tt.cluster)
				}
				seen[n] = tt.cluster
			}
		})
	}
}
