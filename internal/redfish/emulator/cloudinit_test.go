package emulator

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstreamv1beta3"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstreamv1beta4"
	"sigs.k8s.io/cluster-api/util/certs"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/pki"
)

// The user-data of these tests is what Cluster API's kubeadm bootstrap
// provider (CABPK) writes: its own cloud-init templates, around kubeadm
// configurations of kubeadm's own types (v1beta3 and v1beta4).

const (
	testTokenID     = "abcdef"
	testTokenSecret = "0123456789abcdef"
	testToken       = testTokenID + "." + testTokenSecret
)

// testMeta is meta-data as the BareMetalHost controller hands it over.
var testMeta = map[string]any{
	"uuid":             "5c6a2a46-uid-0",
	"metal3-namespace": "metal3",
	"metal3-name":      "host-0000",
	"local-hostname":   "host-0000",
	"local_hostname":   "host-0000",
	"name":             "machine-0",
}

// clusterCAPEM is a new cluster CA, PEM.
func clusterCAPEM(t testing.TB) (crt, key []byte) {
	t.Helper()
	ca, err := pki.NewCA("kubernetes", 0, pki.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	key, err = ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	return ca.CertPEM(), key
}

// kubeletArg is one of nodeRegistration.kubeletExtraArgs.
type kubeletArg struct{ name, value string }

// kubeadmVersion builds kubeadm configurations of one API version.
type kubeadmVersion string

const (
	v1beta3 kubeadmVersion = "kubeadm.k8s.io/v1beta3"
	v1beta4 kubeadmVersion = "kubeadm.k8s.io/v1beta4"
)

func marshal(t testing.TB, obj any) string {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// initConfigs are a ClusterConfiguration and an InitConfiguration (with a
// bootstrap token, as kubeadm init creates one).
func (v kubeadmVersion) initConfigs(t testing.TB, endpoint, name string, args ...kubeletArg) (cluster, init string) {
	t.Helper()
	if v == v1beta3 {
		cc := upstreamv1beta3.ClusterConfiguration{ControlPlaneEndpoint: endpoint}
		cc.APIVersion, cc.Kind = string(v), "ClusterConfiguration"
		ic := upstreamv1beta3.InitConfiguration{
			BootstrapTokens:  []upstreamv1beta3.BootstrapToken{{Token: &upstreamv1beta3.BootstrapTokenString{ID: testTokenID, Secret: testTokenSecret}}},
			NodeRegistration: upstreamv1beta3.NodeRegistrationOptions{Name: name, KubeletExtraArgs: map[string]string{}},
		}
		ic.APIVersion, ic.Kind = string(v), "InitConfiguration"
		for _, a := range args {
			ic.NodeRegistration.KubeletExtraArgs[a.name] = a.value
		}
		return marshal(t, cc), marshal(t, ic)
	}
	cc := upstreamv1beta4.ClusterConfiguration{ControlPlaneEndpoint: endpoint}
	cc.APIVersion, cc.Kind = string(v), "ClusterConfiguration"
	ic := upstreamv1beta4.InitConfiguration{
		BootstrapTokens:  []upstreamv1beta4.BootstrapToken{{Token: &upstreamv1beta4.BootstrapTokenString{ID: testTokenID, Secret: testTokenSecret}}},
		NodeRegistration: upstreamv1beta4.NodeRegistrationOptions{Name: name},
	}
	ic.APIVersion, ic.Kind = string(v), "InitConfiguration"
	for _, a := range args {
		ic.NodeRegistration.KubeletExtraArgs = append(ic.NodeRegistration.KubeletExtraArgs, upstreamv1beta4.Arg{Name: a.name, Value: a.value})
	}
	return marshal(t, cc), marshal(t, ic)
}

// joinConfig is a JoinConfiguration discovering the cluster with a
// bootstrap token.
func (v kubeadmVersion) joinConfig(t testing.TB, endpoint, name string, args ...kubeletArg) string {
	t.Helper()
	hashes := []string{"sha256:7d1b0c1e5d4c2f0a9b8e7f6d5c4b3a2918f7e6d5c4b3a2918f7e6d5c4b3a291"}
	if v == v1beta3 {
		jc := upstreamv1beta3.JoinConfiguration{
			Discovery:        upstreamv1beta3.Discovery{BootstrapToken: &upstreamv1beta3.BootstrapTokenDiscovery{Token: testToken, APIServerEndpoint: endpoint, CACertHashes: hashes}},
			NodeRegistration: upstreamv1beta3.NodeRegistrationOptions{Name: name, KubeletExtraArgs: map[string]string{}},
		}
		jc.APIVersion, jc.Kind = string(v), "JoinConfiguration"
		for _, a := range args {
			jc.NodeRegistration.KubeletExtraArgs[a.name] = a.value
		}
		return marshal(t, jc)
	}
	jc := upstreamv1beta4.JoinConfiguration{
		Discovery:        upstreamv1beta4.Discovery{BootstrapToken: &upstreamv1beta4.BootstrapTokenDiscovery{Token: testToken, APIServerEndpoint: endpoint, CACertHashes: hashes}},
		NodeRegistration: upstreamv1beta4.NodeRegistrationOptions{Name: name},
	}
	jc.APIVersion, jc.Kind = string(v), "JoinConfiguration"
	for _, a := range args {
		jc.NodeRegistration.KubeletExtraArgs = append(jc.NodeRegistration.KubeletExtraArgs, upstreamv1beta4.Arg{Name: a.name, Value: a.value})
	}
	return marshal(t, jc)
}

// initUserData is CABPK's user-data for the first control-plane host.
func initUserData(t testing.TB, v kubeadmVersion, endpoint string, caCrt, caKey []byte, name string, args ...kubeletArg) []byte {
	t.Helper()
	cluster, init := v.initConfigs(t, endpoint, name, args...)
	in := &cloudinit.ControlPlaneInput{ClusterConfiguration: cluster, InitConfiguration: init}
	if caCrt != nil {
		in.Certificates = secret.Certificates{&secret.Certificate{
			Purpose: secret.ClusterCA, CertFile: "/etc/kubernetes/pki/ca.crt", KeyFile: "/etc/kubernetes/pki/ca.key",
			KeyPair: &certs.KeyPair{Cert: caCrt, Key: caKey},
		}}
	}
	out, err := cloudinit.NewInitControlPlane(in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// joinUserData is CABPK's user-data for a worker: a bootstrap token and
// the endpoint, no CA key.
func joinUserData(t testing.TB, v kubeadmVersion, endpoint, name string, args ...kubeletArg) []byte {
	t.Helper()
	out, err := cloudinit.NewNode(&cloudinit.NodeInput{JoinConfiguration: v.joinConfig(t, endpoint, name, args...)})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func gzipB64(t testing.TB, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b64(buf.Bytes())
}

// summary is what a test compares of a kubeadmBoot.
type summary struct {
	join, ca, token              bool
	endpoint                     string
	nodeName, providerID, nodeIP string
	labels                       map[string]string
}

func summarize(b *kubeadmBoot) summary {
	return summary{join: b.join, ca: b.ca != nil, token: b.token, endpoint: b.endpoint, nodeName: b.nodeName, providerID: b.providerID, nodeIP: b.nodeIP, labels: b.labels}
}

func equalSummary(a, b summary) bool {
	return a.join == b.join && a.ca == b.ca && a.token == b.token && a.endpoint == b.endpoint &&
		a.nodeName == b.nodeName && a.providerID == b.providerID && a.nodeIP == b.nodeIP && maps.Equal(a.labels, b.labels)
}

func TestParseUserData(t *testing.T) {
	caCrt, caKey := clusterCAPEM(t)
	_, otherKey := clusterCAPEM(t)
	uuidLabel := kubeletArg{"node-labels", "metal3.io/uuid={{ ds.meta_data.uuid }}"}
	kubeadmInit := func(v kubeadmVersion, name string, args ...kubeletArg) string {
		cluster, init := v.initConfigs(t, "10.0.0.10:6443", name, args...)
		return "---\n" + cluster + "---\n" + init
	}
	for _, tc := range []struct {
		name     string
		userData []byte
		want     summary
		notes    []string // substrings of the notes, in any order
		err      error    // sentinel
		errHas   string
	}{
		{
			name:     "init v1beta4 with the CA: name and uuid label from the meta-data",
			userData: initUserData(t, v1beta4, "10.0.0.10:6443", caCrt, caKey, "{{ ds.meta_data.name }}", uuidLabel),
			want:     summary{ca: true, endpoint: "https://10.0.0.10:6443", nodeName: "machine-0", labels: map[string]string{"metal3.io/uuid": "5c6a2a46-uid-0"}},
		},
		{
			name: "init v1beta3 with the CA: map of extra args, references without spaces, provider-id and node-ip",
			userData: initUserData(t, v1beta3, "api.site.example:6443", caCrt, caKey, "{{ds.meta_data.local_hostname}}",
				kubeletArg{"node-labels", "metal3.io/uuid={{ds.meta_data.uuid}},node-role.kubernetes.io/control-plane="},
				kubeletArg{"provider-id", "metal3://{{ ds.meta_data.uuid }}"},
				kubeletArg{"node-ip", "192.168.10.5"}),
			want: summary{ca: true, endpoint: "https://api.site.example:6443", nodeName: "host-0000", providerID: "metal3://5c6a2a46-uid-0", nodeIP: "192.168.10.5",
				labels: map[string]string{"metal3.io/uuid": "5c6a2a46-uid-0", "node-role.kubernetes.io/control-plane": ""}},
		},
		{
			name:     "init without the CA (a user-supplied CA): no credentials",
			userData: initUserData(t, v1beta4, "10.0.0.10:6443", nil, nil, "cp-0"),
			want:     summary{endpoint: "https://10.0.0.10:6443", nodeName: "cp-0"},
		},
		{
			name:     "join v1beta3 with a token only",
			userData: joinUserData(t, v1beta3, "10.0.0.10:6443", "{{ ds.meta_data.name }}", uuidLabel),
			want:     summary{join: true, token: true, endpoint: "https://10.0.0.10:6443", nodeName: "machine-0", labels: map[string]string{"metal3.io/uuid": "5c6a2a46-uid-0"}},
		},
		{
			name: "join v1beta4 with a token only: list of extra args, the last of a repeated name wins, hostname-override wins over the name",
			userData: joinUserData(t, v1beta4, "[FD00::10]:6443", "{{ ds.meta_data.name }}",
				kubeletArg{"node-labels", "a=b"}, kubeletArg{"node-labels", "metal3.io/uuid={{ ds.meta_data.uuid }}"},
				// Double quotes: YAML doubles single quotes in a quoted
				// string, which cloud-init's Jinja then sees too.
				kubeletArg{"hostname-override", `{{ ds.meta_data["metal3-name"] }}`},
				kubeletArg{"node-ip", "fd00::21,10.0.0.21"}),
			want: summary{join: true, token: true, endpoint: "https://[fd00::10]:6443", nodeName: "host-0000", nodeIP: "fd00::21",
				labels: map[string]string{"metal3.io/uuid": "5c6a2a46-uid-0"}},
		},
		{
			name: "base64, gzip+base64 and b64 files; a --config of runcmd; a reference inside a base64 file stays",
			userData: []byte("## template: jinja\n#cloud-config\nwrite_files:\n" +
				"- path: /etc/kubernetes/pki/ca.crt\n  encoding: base64\n  content: " + b64(caCrt) + "\n" +
				"- path: /etc/kubernetes/pki/ca.key\n  encoding: gzip+base64\n  permissions: '0600'\n  content: " + gzipB64(t, caKey) + "\n" +
				"- path: /etc/kubeadm/init.yaml\n  encoding: b64\n  owner: root:root\n  content: " + b64([]byte(kubeadmInit(v1beta4, "cp-{{ ds.meta_data.uuid }}"))) + "\n" +
				"runcmd:\n- [kubeadm, init, --config, /etc/kubeadm/init.yaml]\n"),
			want:  summary{ca: true, endpoint: "https://10.0.0.10:6443"},
			notes: []string{"nodeRegistration.name is not a Node name"},
		},
		{
			name: "--config= and a kubeadm configuration split by append",
			userData: []byte("#cloud-config\nwrite_files:\n" +
				"- path: /tmp/k.yaml\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta4\n    kind: ClusterConfiguration\n    controlPlaneEndpoint: API.Example.com\n" +
				"- path: /tmp/k.yaml\n  append: true\n  content: |\n    ---\n    apiVersion: kubeadm.k8s.io/v1beta4\n    kind: InitConfiguration\n    localAPIEndpoint: {advertiseAddress: 10.0.0.1, bindPort: 8443}\n    nodeRegistration: {name: CP-1}\n" +
				"- path: /tmp/k.yaml\n  append: true\n  content: |\n    ---\n    apiVersion: kubelet.config.k8s.io/v1beta1\n    kind: KubeletConfiguration\n    nodeRegistration: 7\n" +
				"runcmd:\n- 'kubeadm init --config=/tmp/k.yaml && echo done'\n"),
			want: summary{endpoint: "https://api.example.com:8443", nodeName: "cp-1"},
		},
		{
			name:     "a missing meta-data key is noted and leaves the name invalid",
			userData: joinUserData(t, v1beta4, "10.0.0.10:6443", "{{ ds.meta_data.hostname }}"),
			want:     summary{join: true, token: true, endpoint: "https://10.0.0.10:6443"},
			notes:    []string{`meta-data "hostname"`, "not a Node name"},
		},
		{
			name:     "file discovery is not read",
			userData: []byte("#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta3\n    kind: JoinConfiguration\n    discovery: {file: {kubeConfigPath: /etc/k.conf}}\n    nodeRegistration: {name: w-1}\n"),
			want:     summary{join: true, nodeName: "w-1"},
			notes:    []string{"discovery.file is not read"},
		},
		{name: "Ignition", userData: []byte(`{"ignition":{"version":"3.4.0"}}`), err: errNotCloudConfig},
		{name: "a script", userData: []byte("#!/bin/sh\nkubeadm join --token " + testToken + "\n"), err: errNotCloudConfig},
		{name: "a cloud-config without kubeadm", userData: []byte("#cloud-config\npackages: [vim]\nruncmd: [echo hi]\n"), err: errNoKubeadm},
		{name: "an empty cloud-config", userData: []byte("## template: jinja\n#cloud-config\n"), err: errNoKubeadm},
		{
			name:     "YAML the decoder would quote",
			userData: []byte("#cloud-config\nwrite_files:\n- path: /x\n  content: {{" + testToken + "}}\n"),
			err:      errUserData, errHas: "the cloud-config is not valid YAML",
		},
		{name: "tabs", userData: []byte("#cloud-config\nwrite_files:\n\t- path: /x\n"), err: errUserData, errHas: "line 3"},
		{name: "not a mapping", userData: []byte("#cloud-config\n- " + testToken + "\n"), err: errUserData, errHas: "not a mapping"},
		{name: "write_files not a list", userData: []byte("#cloud-config\nwrite_files: " + testToken + "\n"), err: errUserData, errHas: "write_files is not a list"},
		{name: "a path that is not a string", userData: []byte("#cloud-config\nwrite_files:\n- path: [a]\n"), err: errUserData, errHas: "write_files[0].path is not a string"},
		{
			name:     "bad base64",
			userData: []byte("#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm.yaml\n  encoding: b64\n  content: '" + testToken + "!'\n"),
			err:      errUserData, errHas: "write_files[0]: the content is not base64",
		},
		{
			name:     "gzip that is not",
			userData: []byte("#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm.yaml\n  encoding: gz+b64\n  content: " + b64([]byte(testToken)) + "\n"),
			err:      errUserData, errHas: "not gzip",
		},
		{
			name:     "a CA key of another CA",
			userData: initUserData(t, v1beta4, "10.0.0.10:6443", caCrt, otherKey, "cp-0"),
			err:      errUserData, errHas: "the cluster CA in /etc/kubernetes/pki/ca.crt and /etc/kubernetes/pki/ca.key",
		},
		{
			name:     "a CA that is not PEM",
			userData: initUserData(t, v1beta4, "10.0.0.10:6443", []byte(testToken), caKey, "cp-0"),
			err:      errUserData, errHas: "no PEM CERTIFICATE",
		},
		{
			name:     "kubeletExtraArgs of neither form",
			userData: []byte("#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm.yaml\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta4\n    kind: InitConfiguration\n    nodeRegistration: {kubeletExtraArgs: 'node-labels=" + testToken + "'}\n"),
			err:      errUserData, errHas: "neither a mapping (kubeadm v1beta3) nor a list",
		},
		{
			name:     "a field of the wrong type",
			userData: []byte("#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm.yaml\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta4\n    kind: InitConfiguration\n    localAPIEndpoint: {bindPort: '" + testToken + "'}\n"),
			err:      errUserData, errHas: "localAPIEndpoint.bindPort must be a number",
		},
		{
			name:     "an endpoint that is not one",
			userData: joinUserData(t, v1beta4, "10.0.0.10:http", "w-0"),
			err:      errUserData, errHas: "apiServerEndpoint: the port is not a number",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := parseUserData(tc.userData, testMeta)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(fmt.Sprint(err), tc.errHas) {
					t.Fatalf("error %v, want %v containing %q", err, tc.err, tc.errHas)
				}
				for _, secret := range []string{testTokenSecret, string(caKey[40:80])} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("the error quotes the user-data: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := summarize(b); !equalSummary(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			notes := strings.Join(b.notes, "\n")
			for _, n := range tc.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("no note %q in %q", n, notes)
				}
			}
			if len(tc.notes) == 0 && len(b.notes) > 0 {
				t.Errorf("notes %q", b.notes)
			}
			if d := b.describe(); strings.Contains(d, testTokenSecret) || strings.Contains(notes, testTokenSecret) {
				t.Errorf("the token in %q / %q", d, notes)
			}
		})
	}
}

// TestRenderMetaData: the forms of a reference cloud-init's Jinja
// understands, and what stays.
func TestRenderMetaData(t *testing.T) {
	meta := map[string]any{"name": "m-0", "local-hostname": "h-0", "count": float64(3), "on": true, "nested": map[string]any{"a": "b"}}
	for _, tc := range []struct {
		in, want string
		missing  []string
	}{
		{"{{ ds.meta_data.name }}", "m-0", nil},
		{"{{ds.meta_data.name}}", "m-0", nil},
		{"x-{{  ds.meta_data.name\t}}-y", "x-m-0-y", nil},
		{"{{ ds.meta_data['local-hostname'] }}", "h-0", nil},
		{`{{ ds.meta_data["local-hostname"] }}`, "h-0", nil},
		{"{{ ds.meta_data.local_hostname }}", "h-0", nil},
		{"{{ ds.meta_data.count }}/{{ ds.meta_data.on }}", "3/true", nil},
		{"{{ ds.meta_data.nested }}", "{{ ds.meta_data.nested }}", []string{"nested"}},
		{"{{ ds.meta_data.nope }}{{ ds.meta_data.nope }}", "{{ ds.meta_data.nope }}{{ ds.meta_data.nope }}", []string{"nope"}},
		{"{{ v1.local_hostname }} {{ name }}", "{{ v1.local_hostname }} {{ name }}", nil},
	} {
		got, missing := renderMetaData(tc.in, meta)
		if got != tc.want || fmt.Sprint(missing) != fmt.Sprint(tc.missing) {
			t.Errorf("%q: %q missing %v, want %q missing %v", tc.in, got, missing, tc.want, tc.missing)
		}
	}
}

// FuzzParseUserData: whatever the user-data, the parser neither panics
// nor fails with an error other than its own three, and its errors never
// quote the seeds' CA key or token.
func FuzzParseUserData(f *testing.F) {
	caCrt, caKey := clusterCAPEM(f)
	seeds := [][]byte{
		initUserData(f, v1beta4, "10.0.0.10:6443", caCrt, caKey, "{{ ds.meta_data.name }}", kubeletArg{"node-labels", "metal3.io/uuid={{ ds.meta_data.uuid }}"}),
		initUserData(f, v1beta3, "api.example:6443", caCrt, caKey, "cp-0", kubeletArg{"provider-id", "metal3://x"}),
		joinUserData(f, v1beta3, "10.0.0.10:6443", "{{ds.meta_data.name}}"),
		joinUserData(f, v1beta4, "10.0.0.10:6443", "w", kubeletArg{"node-ip", "10.0.0.2"}),
		[]byte("#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm.yaml\n  encoding: gzip+base64\n  content: " + gzipB64(f, []byte("apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n")) + "\n"),
		[]byte("#cloud-config\nwrite_files:\n- {path: /x, content: {{a}}}\n"),
		[]byte("## template: jinja\n#cloud-config\n"),
		[]byte(`{"ignition":{}}`),
		[]byte("\xff\xfe#cloud-config"),
		nil,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	secrets := []string{testTokenSecret, string(caKey[40:80])}
	f.Fuzz(func(t *testing.T, userData []byte) {
		b, err := parseUserData(userData, testMeta)
		if err != nil {
			if !errors.Is(err, errUserData) && !errors.Is(err, errNotCloudConfig) && !errors.Is(err, errNoKubeadm) {
				t.Fatalf("error of no known kind: %v", err)
			}
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("the error quotes a secret: %v", err)
				}
			}
			return
		}
		if b == nil {
			t.Fatal("no result and no error")
		}
		if b.nodeName != "" && b.nodeName != strings.ToLower(b.nodeName) {
			t.Fatalf("Node name %q is not lower case", b.nodeName)
		}
		if b.endpoint != "" && !strings.HasPrefix(b.endpoint, "https://") {
			t.Fatalf("endpoint %q", b.endpoint)
		}
		_ = b.describe()
	})
}
