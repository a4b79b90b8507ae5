package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stmcginnis/gofish/schemas"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// insertDrive inserts a live ISO that is a config drive holding the
// meta-data and user-data, and a one-time boot override to it.
func (d *hostDriver) insertDrive(metaData string, userData []byte) {
	d.t.Helper()
	d.insert(liveISO(d.t, metaData, userData))
}

// controllerMeta is the meta-data the BareMetalHost controller hands a
// host: upstream's config-drive defaults, with the Machine's name as name
// (what Cluster API Metal3 puts in the host's metaData Secret).
func controllerMeta(t *testing.T, host, uid, machine string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{
		"uuid": uid, "metal3-namespace": "metal3", "metal3-name": host,
		"local-hostname": host, "local_hostname": host, "name": machine,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// secretsOf are the pieces of a CA key and a token that must never show:
// every line of the key, and the token's secret.
func secretsOf(caKey []byte) []string {
	out := []string{testTokenSecret}
	for _, l := range strings.Split(string(caKey), "\n") {
		if len(l) > 16 && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

func checkNoSecrets(t *testing.T, out string, caKey []byte) {
	t.Helper()
	for _, s := range secretsOf(caKey) {
		if strings.Contains(out, s) {
			t.Errorf("%q appears in the output:\n%s", s, out)
		}
	}
	if strings.Contains(out, "PRIVATE KEY") {
		t.Errorf("a private key appears in the output:\n%s", out)
	}
}

// kubeadmConfig waits for kube-system/kubeadm-config (uploaded after the
// Node registers) and returns it.
func kubeadmConfig(t *testing.T, c client.Client) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	var last error
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		last = c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "kubeadm-config"}, cm)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("kube-system/kubeadm-config: %v", last)
	}
	return cm
}

// TestUserDataClusterChoice: which cluster each user-data sends a booted
// host's Node to, and what the log says, with no API server behind (the
// Node writes fail and are retried), and no secret of the user-data in
// the log.
func TestUserDataClusterChoice(t *testing.T) {
	caCrt, caKey := clusterCAPEM(t)
	var log syncBuffer
	s, base := start(t, Config{Hosts: Generate(5, 1)}, Options{Log: &log})
	c := connect(t, base, testUser, testPassword, false)
	uuidLabel := kubeletArg{"node-labels", "metal3.io/uuid={{ ds.meta_data.uuid }}"}
	const down = "127.0.0.1:1" // nothing listens: connection refused
	for _, tc := range []struct {
		host, machine string
		userData      []byte
		cluster       string // HostState.NodeCluster
		node          string // HostState.Node
		logHas        string
	}{
		{"host-0000", "cp-0", initUserData(t, v1beta4, down, caCrt, caKey, "{{ ds.meta_data.name }}", uuidLabel),
			"https://" + down, "cp-0", "host-0000: credentials for https://" + down + ": a client certificate (group system:masters) from the cluster CA of the user-data"},
		{"host-0001", "worker-1", joinUserData(t, v1beta3, down, "{{ ds.meta_data.name }}", uuidLabel),
			"https://" + down, "worker-1", "host-0001: joins https://" + down + " with the credentials from an earlier host's cluster CA"},
		{"host-0002", "worker-2", joinUserData(t, v1beta4, "127.0.0.1:2", "{{ ds.meta_data.name }}"),
			"", "worker-2", "host-0002: no Node: no credentials for https://127.0.0.1:2: the user-data carries no cluster CA and no earlier host's did (a bootstrap token alone is not enough: the kubelet TLS bootstrap is not emulated), and there is no target cluster (--target-kubeconfig)"},
		{"host-0003", "m-3", []byte("#cloud-config\nwrite_files:\n- path: /x\n  content: {{" + testToken + "}}\n"),
			"", "host-0003", "host-0003: no Node: the user-data cannot be read: the cloud-config is not valid YAML"},
		{"host-0004", "m-4", []byte("#!/bin/sh\nkubeadm join --token " + testToken + "\n"),
			"", "host-0004", "host-0004: no Node: the user-data is not a #cloud-config document (it names no cluster)"},
	} {
		t.Run(tc.host, func(t *testing.T) {
			d := newHostDriver(t, c, tc.host)
			d.insertDrive(controllerMeta(t, tc.host, "uid-"+tc.host, tc.machine), tc.userData)
			d.reset(schemas.OnResetType)
			st := waitHost(t, s, tc.host, "booted", func(st HostState) bool { return st.Booted })
			if !st.Booted || st.Node != tc.node || st.NodeCluster != tc.cluster {
				t.Errorf("state: booted %v, Node %q in %q; want %q in %q", st.Booted, st.Node, st.NodeCluster, tc.node, tc.cluster)
			}
			if !strings.Contains(log.String(), tc.logHas) {
				t.Errorf("the log lacks %q:\n%s", tc.logHas, log.String())
			}
		})
	}
	// The Node writes to the cluster that is down fail through the
	// client the emulator made, and are retried.
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(log.String(), "host-0000: Node: reading cp-0 in https://"+down), nil
	}); err != nil {
		t.Errorf("no failed Node write logged:\n%s", log.String())
	}
	// One client per cluster, built once.
	c1, err1 := s.clusters.client("https://" + down)
	c2, err2 := s.clusters.client("https://" + down)
	if err1 != nil || err2 != nil || c1 != c2 {
		t.Errorf("clients %p %p (%v, %v): want one", c1, c2, err1, err2)
	}
	checkNoSecrets(t, log.String(), caKey)
}

// TestBootRegistersInUserDataCluster: two clusters; hosts whose user-data
// names the second (CABPK's, with its CA for the first control-plane
// host, a bootstrap token only for a worker) get their Nodes there, named
// and labelled as the user-data asks; --target-kubeconfig's cluster gets
// nothing from them, only a host whose user-data names a cluster without
// credentials. The second cluster is a full local control plane: its CA
// (state dir pki/ca.{crt,key}) signs its API server's certificate and the
// client certificates it accepts, as a kubeadm cluster's does, and kwok
// runs there.
func TestBootRegistersInUserDataCluster(t *testing.T) {
	target := testenv.StartAPI(t, testenv.Options{})
	workload := testenv.StartFull(t, testenv.Options{Nodes: 1})
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(workload.StateDir, "pki", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	caCrt, caKey := read("ca.crt"), read("ca.key")
	endpoint := strings.TrimPrefix(workload.Config.Host, "https://")
	url := "https://" + endpoint

	var log syncBuffer
	s, base := start(t, Config{Hosts: Generate(3, 1), BootDelay: 100 * time.Millisecond}, Options{TargetConfig: target.Config, Log: &log})
	c := connect(t, base, testUser, testPassword, false)
	cp, worker, stray := newHostDriver(t, c, "host-0000"), newHostDriver(t, c, "host-0001"), newHostDriver(t, c, "host-0002")
	uuidLabel := kubeletArg{"node-labels", "metal3.io/uuid={{ ds.meta_data.uuid }}"}
	checkNode := func(t *testing.T, node *corev1.Node, host, uid string) {
		t.Helper()
		if node.Labels["metal3.io/uuid"] != uid || node.Annotations[HostAnnotation] != host || node.Spec.ProviderID != "" {
			t.Errorf("Node %s: labels %v, annotations %v, providerID %q", node.Name, node.Labels, node.Annotations, node.Spec.ProviderID)
		}
		if st := mustState(t, s, host); st.Node != node.Name || st.NodeCluster != url {
			t.Errorf("state: Node %q in %q", st.Node, st.NodeCluster)
		}
	}

	t.Run("the first control-plane host registers in the cluster of its user-data", func(t *testing.T) {
		cp.insertDrive(controllerMeta(t, "host-0000", "uid-0", "cp-machine-0"), initUserData(t, v1beta4, endpoint, caCrt, caKey, "{{ ds.meta_data.name }}", uuidLabel))
		cp.reset(schemas.OnResetType)
		checkNode(t, waitNode(t, workload.Client, "cp-machine-0", "created", created), "host-0000", "uid-0")
		// kubeadm init's upload-config: the ClusterConfiguration of the
		// user-data, which Cluster API's KubeadmControlPlane waits for.
		cm := kubeadmConfig(t, workload.Client)
		var cc struct{ Kind, ControlPlaneEndpoint string }
		if err := yaml.Unmarshal([]byte(cm.Data["ClusterConfiguration"]), &cc); err != nil || cc.Kind != "ClusterConfiguration" || cc.ControlPlaneEndpoint != endpoint {
			t.Errorf("kube-system/kubeadm-config ClusterConfiguration: %+v (%v), want kind ClusterConfiguration, controlPlaneEndpoint %s", cc, err, endpoint)
		}
		// What KubeadmControlPlane does on an upgrade: the emulator must
		// not undo it (checked after the host boots again, below).
		cm.Data["ClusterConfiguration"] += "# changed by another controller\n"
		if err := workload.Client.Update(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a worker with a bootstrap token only joins the same cluster", func(t *testing.T) {
		worker.insertDrive(controllerMeta(t, "host-0001", "uid-1", "worker-machine-1"), joinUserData(t, v1beta3, endpoint, "{{ds.meta_data.name}}", uuidLabel))
		worker.reset(schemas.OnResetType)
		checkNode(t, waitNode(t, workload.Client, "worker-machine-1", "created", created), "host-0001", "uid-1")
	})

	t.Run("a token for a cluster without credentials: the target cluster", func(t *testing.T) {
		stray.insertDrive(controllerMeta(t, "host-0002", "uid-2", "worker-machine-2"), joinUserData(t, v1beta4, "127.0.0.1:1", "{{ ds.meta_data.name }}", uuidLabel))
		stray.reset(schemas.OnResetType)
		node := waitNode(t, target.Client, "worker-machine-2", "created", created)
		if node.Labels["metal3.io/uuid"] != "uid-2" {
			t.Errorf("labels %v", node.Labels)
		}
		if !strings.Contains(log.String(), "host-0002: Node in the target cluster: no credentials for https://127.0.0.1:1") {
			t.Errorf("the log does not say why:\n%s", log.String())
		}
	})

	t.Run("the target cluster has no Node of the hosts of the other cluster", func(t *testing.T) {
		var nodes corev1.NodeList
		if err := target.Client.List(context.Background(), &nodes); err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes.Items {
			if n.Annotations[HostAnnotation] != "host-0002" {
				t.Errorf("Node %s of %s in the target cluster", n.Name, n.Annotations[HostAnnotation])
			}
		}
	})

	t.Run("power off makes the Node NotReady in its cluster; a providerID set by another controller stays", func(t *testing.T) {
		// What Cluster API Metal3 does once the host is provisioned: it
		// finds the Node by its metal3.io/uuid label and sets the ID.
		var nodes corev1.NodeList
		if err := workload.Client.List(context.Background(), &nodes, client.MatchingLabels{"metal3.io/uuid": "uid-0"}); err != nil || len(nodes.Items) != 1 {
			t.Fatalf("Nodes labelled uid-0: %d, %v", len(nodes.Items), err)
		}
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			node := &corev1.Node{}
			if err := workload.Client.Get(context.Background(), client.ObjectKey{Name: nodes.Items[0].Name}, node); err != nil {
				return err
			}
			node.Spec.ProviderID = "metal3://metal3/host-0000/cp-machine-0"
			return workload.Client.Update(context.Background(), node)
		}); err != nil {
			t.Fatalf("setting the providerID: %v", err)
		}
		cp.reset(schemas.ForceOffResetType)
		node := waitNode(t, workload.Client, "cp-machine-0", "powered off", poweredOff)
		if node.Spec.ProviderID != "metal3://metal3/host-0000/cp-machine-0" {
			t.Errorf("providerID %q", node.Spec.ProviderID)
		}
		cp.reset(schemas.OnResetType)
		node = waitNode(t, workload.Client, "cp-machine-0", "back with kwok", managedByKwok)
		if node.Spec.ProviderID != "metal3://metal3/host-0000/cp-machine-0" {
			t.Errorf("providerID %q after booting again", node.Spec.ProviderID)
		}
		if cm := kubeadmConfig(t, workload.Client); !strings.HasSuffix(cm.Data["ClusterConfiguration"], "# changed by another controller\n") {
			t.Errorf("kube-system/kubeadm-config after booting again was overwritten:\n%s", cm.Data["ClusterConfiguration"])
		}
	})

	t.Run("the deploy agent writing a disk deletes the Node in its cluster", func(t *testing.T) {
		s.diskChanged(s.byName["host-0001"], s.byName["host-0001"].Disks[0].Name)
		waitNode(t, workload.Client, "worker-machine-1", "deleted", nil)
		waitNode(t, workload.Client, "cp-machine-0", "kept", managedByKwok)
	})

	t.Run("neither the CA key nor the token is logged", func(t *testing.T) {
		checkNoSecrets(t, log.String(), caKey)
		if !strings.Contains(log.String(), fmt.Sprintf("Node cp-machine-0 in %s created", url)) {
			t.Errorf("the log does not say where the Node went:\n%s", log.String())
		}
	})
}
