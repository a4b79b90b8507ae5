package sipcluster_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/sip/sipcluster"
)

// TestLifecycle: hosts picked one per rack and labelled, the load balancer
// in front of the active control plane, the services Available; a failed
// active host replaced by the standby with the configuration following;
// scale down releasing the right host; delete releasing everything.
func TestLifecycle(t *testing.T) {
	s := newSite(t, "sip-life")
	s.host("cp-a1", "cp", "r1", "127.0.1.1")
	s.host("cp-a2", "cp", "r1", "127.0.1.2")
	s.host("cp-b1", "cp", "r2", "127.0.1.3")
	s.host("cp-c1", "cp", "r3", "127.0.1.4")
	s.host("cp-d1", "cp", "r4", "127.0.1.5")
	s.host("w-1", "w", "r1", "127.0.2.1")
	s.host("w-2", "w", "r1", "127.0.2.2")
	s.host("w-3", "w", "r2", "127.0.2.3")
	startOperator(t)
	s.cluster("tenant", 2, 1, 2, nil)

	c := s.waitReady("tenant", sipv1.ReasonTypeReconciliationSucceeded)
	s.waitLabels("tenant", "cp-a1=ControlPlane", "cp-b1=ControlPlane", "cp-c1=ControlPlane/standby", "w-1=Worker", "w-2=Worker")
	s.waitServers("tenant", "cp-a1@127.0.1.1:6443", "cp-b1@127.0.1.3:6443")
	if got := c.Status.Nodes[sipv1.RoleControlPlane]; strings.Join(got.Active, ",") != "cp-a1,cp-b1" || strings.Join(got.Standby, ",") != "cp-c1" || got.Summary != "2/2 active, 1/1 standby" {
		t.Errorf("status.nodes.ControlPlane %+v", got)
	}
	if len(c.Status.Services) != 1 || !c.Status.Services[0].Ready || c.Status.ServicesSummary != "1/1" {
		t.Errorf("status.services %+v summary %q", c.Status.Services, c.Status.ServicesSummary)
	}
	// The service's Deployment and Service exist, owned by the cluster.
	var deps appsv1.DeploymentList
	if err := env.Client.List(context.Background(), &deps, client.InNamespace(s.ns), client.MatchingLabels{sipv1.ClusterNameLabel: "tenant"}); err != nil || len(deps.Items) != 1 {
		t.Fatalf("Deployments: %v %d", err, len(deps.Items))
	}
	if o := deps.Items[0].OwnerReferences; len(o) != 1 || o[0].Kind != "SIPCluster" || o[0].Name != "tenant" {
		t.Errorf("owner references %+v", o)
	}

	// An active control-plane host fails: it is released, the standby is
	// promoted, a new standby found (cp-a2, in the rack cp-a1 freed), the
	// load balancer follows.
	s.update("cp-a1", func(b *metal3v1alpha1.BareMetalHost) {
		b.Status.OperationalStatus = metal3v1alpha1.OperationalStatusError
		b.Status.ErrorType = metal3v1alpha1.ProvisionedRegistrationError
	}, true)
	s.waitLabels("tenant", "cp-b1=ControlPlane", "cp-c1=ControlPlane", "cp-a2=ControlPlane/standby", "w-1=Worker", "w-2=Worker")
	s.waitServers("tenant", "cp-b1@127.0.1.3:6443", "cp-c1@127.0.1.4:6443")
	s.waitReady("tenant", sipv1.ReasonTypeReconciliationSucceeded)

	// Scale the workers down: the last one goes.
	patchCluster(t, s.ns, "tenant", func(c *sipv1.SIPCluster) {
		ns := c.Spec.Nodes[sipv1.RoleWorker]
		ns.Count.Active = 1
		c.Spec.Nodes[sipv1.RoleWorker] = ns
	})
	s.waitLabels("tenant", "cp-b1=ControlPlane", "cp-c1=ControlPlane", "cp-a2=ControlPlane/standby", "w-1=Worker")
	s.waitReady("tenant", sipv1.ReasonTypeReconciliationSucceeded)

	// Delete: services gone, hosts released, the cluster gone.
	if err := env.Client.Delete(context.Background(), &sipv1.SIPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "tenant"}}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "tenant"}, &sipv1.SIPCluster{})), nil
	}); err != nil {
		t.Fatal("the deleted SIPCluster was kept")
	}
	if got := s.labelled("tenant"); len(got) != 0 {
		t.Errorf("hosts still labelled after delete: %v", got)
	}
	for _, list := range []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ConfigMapList{}, &corev1.ServiceList{}} {
		if err := env.Client.List(context.Background(), list, client.InNamespace(s.ns), client.MatchingLabels{sipv1.ClusterNameLabel: "tenant"}); err != nil {
			t.Fatal(err)
		}
		if n := len(itemsOf(list)); n != 0 {
			t.Errorf("%T: %d objects of the deleted cluster left", list, n)
		}
	}
}

// TestUnschedulable: too few racks: the condition says why and nothing
// is labelled; a new host in a new rack makes it schedulable.
func TestUnschedulable(t *testing.T) {
	s := newSite(t, "sip-unsched")
	s.host("cp-1", "cp", "r1", "127.0.3.1")
	s.host("cp-2", "cp", "r1", "127.0.3.2")
	s.host("w-1", "w", "r1", "127.0.3.3")
	startOperator(t)
	s.cluster("tenant", 2, 0, 1, nil)
	c := s.waitReady("tenant", sipv1.ReasonTypeUnschedulable)
	msg := readyMessage(c)
	for _, want := range []string{"ControlPlane: 2 hosts wanted, 1 could be given (2 matched the labelSelector)", "in a topology domain the cluster already uses (sip-unsched/cp-2)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if got := s.labelled("tenant"); len(got) != 0 {
		t.Errorf("an unschedulable cluster labelled %v", got)
	}
	s.host("cp-3", "cp", "r2", "127.0.3.4")
	s.waitReady("tenant", sipv1.ReasonTypeReconciliationSucceeded)
	s.waitLabels("tenant", "cp-1=ControlPlane", "cp-3=ControlPlane", "w-1=Worker")
}

// TestHalfLabelledIsFinished: hosts left labelled by a pass that stopped
// part-way (as if the operator was killed) are kept and the plan finished;
// a half-claimed cluster that can no longer be scheduled is undone.
func TestHalfLabelledIsFinished(t *testing.T) {
	s := newSite(t, "sip-half")
	s.host("cp-1", "cp", "r1", "127.0.4.1")
	s.host("cp-2", "cp", "r2", "127.0.4.2")
	s.host("cp-3", "cp", "r3", "127.0.4.3")
	s.host("w-1", "w", "r1", "127.0.4.4")
	// The earlier pass labelled cp-3 (it would have picked cp-1, cp-2).
	s.update("cp-3", func(b *metal3v1alpha1.BareMetalHost) {
		b.Labels[sipv1.ClusterNamespaceLabel], b.Labels[sipv1.ClusterNameLabel], b.Labels[sipv1.NodeTypeLabel] = s.ns, "tenant", string(sipv1.RoleControlPlane)
	}, false)
	// And half-claimed a host for a cluster that cannot be scheduled.
	s.update("w-1", func(b *metal3v1alpha1.BareMetalHost) {
		b.Labels[sipv1.ClusterNamespaceLabel], b.Labels[sipv1.ClusterNameLabel], b.Labels[sipv1.NodeTypeLabel] = s.ns, "toobig", string(sipv1.RoleWorker)
	}, false)
	startOperator(t)
	s.cluster("tenant", 2, 0, 0, nil)
	s.waitReady("tenant", sipv1.ReasonTypeReconciliationSucceeded)
	s.waitLabels("tenant", "cp-1=ControlPlane", "cp-3=ControlPlane")

	s.cluster("toobig", 0, 0, 5, func(c *sipv1.SIPCluster) { c.Spec.Services = sipv1.SIPClusterServices{} })
	s.waitReady("toobig", sipv1.ReasonTypeUnschedulable)
	s.waitLabels("toobig")
}

// TestBadInput: each problem of a host's data is a condition naming the
// field (specs the schema refuses are TestInvalidClusterIsDeletable's).
func TestBadInput(t *testing.T) {
	s := newSite(t, "sip-bad")
	s.host("cp-1", "cp", "r1", "127.0.5.1")
	s.host("w-1", "w", "r1", "127.0.5.2")
	// A host whose networkData Secret is missing, one whose JSON is broken.
	s.host("cpx-1", "cpx", "r1", "127.0.5.3")
	if err := env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "cpx-1-network-data"}}); err != nil {
		t.Fatal(err)
	}
	s.host("cpy-1", "cpy", "r1", "127.0.5.4")
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "cpy-1-network-data"}, Data: map[string][]byte{"networkData": []byte(`{"networks": [`)}}
	if err := env.Client.Update(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	startOperator(t)
	selector := func(flavor string) func(*sipv1.SIPCluster) {
		return func(c *sipv1.SIPCluster) {
			ns := c.Spec.Nodes[sipv1.RoleControlPlane]
			ns.LabelSelector.MatchLabels = map[string]string{"flavor": s.flavor + "-" + flavor}
			c.Spec.Nodes[sipv1.RoleControlPlane] = ns
			c.Spec.Nodes[sipv1.RoleWorker] = sipv1.NodeSet{LabelSelector: c.Spec.Nodes[sipv1.RoleWorker].LabelSelector}
		}
	}
	tests := []struct {
		name   string
		mutate func(*sipv1.SIPCluster)
		reason string
		want   string
	}{
		{"no-secret", selector("cpx"), sipv1.ReasonTypeInfraServiceFailure, "BareMetalHost sip-bad/cpx-1: spec.networkData: Secret sip-bad/cpx-1-network-data not found"},
		{"bad-json", selector("cpy"), sipv1.ReasonTypeInfraServiceFailure, "BareMetalHost sip-bad/cpy-1: spec.networkData: Secret sip-bad/cpy-1-network-data key networkData: networkData is not a network_data.json document"},
		{"no-interface", func(c *sipv1.SIPCluster) {
			c.Spec.Services.LoadBalancerControlPlane[0].NodeInterface = "storage"
		}, sipv1.ReasonTypeInfraServiceFailure, "spec.services.loadBalancerControlPlane[0].nodeInterfaceId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.cluster(tc.name, 1, 0, 0, tc.mutate)
			c := s.waitReady(tc.name, tc.reason)
			if msg := readyMessage(c); !strings.Contains(msg, tc.want) {
				t.Errorf("message %q lacks %q", msg, tc.want)
			}
			if got := s.labelled(tc.name); len(got) != 0 {
				t.Errorf("labelled %v", got)
			}
		})
	}
}

// TestEveryService: a jump host and an OIDC provider beside the load
// balancer: each Deployment becomes Available and is reported per service,
// the jump host's BMC credentials go to a Secret only, and status.oidc
// holds the tenant API server's flags.
func TestEveryService(t *testing.T) {
	s := newSite(t, "sip-svc")
	s.host("cp-1", "cp", "r1", "127.0.6.1")
	s.host("w-1", "w", "r2", "127.0.6.2")
	ctx := context.Background()
	for _, sec := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "node-keys"}, Data: map[string][]byte{"id_ed25519": []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-real-key\n-----END OPENSSH PRIVATE KEY-----\n")}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "oidc"}, Data: map[string][]byte{"kubernetes": []byte("client-secret-value-1")}},
	} {
		if err := env.Client.Create(ctx, sec); err != nil {
			t.Fatal(err)
		}
	}
	startOperator(t)
	s.cluster("tenant", 1, 0, 1, func(c *sipv1.SIPCluster) {
		svc := sipv1.SIPClusterService{Image: "registry.invalid/jump-host:1", NodeInterface: "oam-ipv4"}
		c.Spec.Services.JumpHost = []sipv1.JumpHostService{{SIPClusterService: svc, NodePort: nextNodePort(), NodeSSHPrivateKeys: "node-keys",
			SSHAuthorizedKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJXNIxUndrD+w6LTkRCdETI02QM1/MvGdtRolANSHk8r operator"}}}
		c.Spec.Services.Auth = []sipv1.AuthService{{
			SIPClusterService: sipv1.SIPClusterService{Image: "registry.invalid/dex:2"},
			NodePort:          nextNodePort(),
			Issuer:            "https://10.23.0.100:30556/dex",
			StaticClients:     []sipv1.OIDCClient{{ID: "kubernetes", Name: "Kubernetes", SecretRef: sipv1.SecretKeyRef{Name: "oidc", Key: "kubernetes"}}},
			Connectors:        []sipv1.OIDCConnector{{Type: "mockCallback", ID: "mock", Name: "Example"}},
		}}
	})
	c := s.waitReady("tenant", sipv1.ReasonTypeReconciliationSucceeded)
	if c.Status.ServicesSummary != "3/3" || len(c.Status.Services) != 3 {
		t.Fatalf("services %+v (%s)", c.Status.Services, c.Status.ServicesSummary)
	}
	types := map[string]bool{}
	for _, st := range c.Status.Services {
		if !st.Ready {
			t.Errorf("service %s (%s) not ready: %s", st.Name, st.Type, st.Message)
		}
		types[st.Type] = true
	}
	if !types["LoadBalancerControlPlane"] || !types["JumpHost"] || !types["Auth"] {
		t.Errorf("service types %v", types)
	}
	if c.Status.OIDC == nil || c.Status.OIDC.IssuerURL != "https://10.23.0.100:30556/dex" || c.Status.OIDC.ClientID != "kubernetes" ||
		!slices.Contains(c.Status.OIDC.APIServerArgs, "--oidc-issuer-url=https://10.23.0.100:30556/dex") {
		t.Errorf("status.oidc %+v", c.Status.OIDC)
	}
	// Passwords and client secrets are in Secrets only.
	var cms corev1.ConfigMapList
	if err := env.Client.List(ctx, &cms, client.InNamespace(s.ns), client.MatchingLabels{sipv1.ClusterNameLabel: "tenant"}); err != nil {
		t.Fatal(err)
	}
	sshConfig := ""
	for _, cm := range cms.Items {
		for k, v := range cm.Data {
			for _, secret := range []string{"bmc-pw-cp-1", "bmc-pw-w-1", "client-secret-value-1", "not-a-real-key"} {
				if strings.Contains(v, secret) {
					t.Errorf("ConfigMap %s key %s holds a secret", cm.Name, k)
				}
			}
			if k == "ssh_config" {
				sshConfig = v
			}
		}
	}
	for _, want := range []string{"Host cp-1", "HostName 127.0.6.1", "Host w-1", "HostName 127.0.6.2"} {
		if !strings.Contains(sshConfig, want) {
			t.Errorf("jump host ssh_config lacks %q:\n%s", want, sshConfig)
		}
	}
	var secs corev1.SecretList
	if err := env.Client.List(ctx, &secs, client.InNamespace(s.ns), client.MatchingLabels{sipv1.ClusterNameLabel: "tenant"}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sec := range secs.Items {
		for _, v := range sec.Data {
			found = found || string(v) == "bmc-pw-cp-1"
		}
	}
	if !found {
		t.Error("no Secret of the cluster holds cp-1's BMC password for the jump host")
	}
}

// TestDeleteForMoveKeepsHosts: clusterctl move deletes the source's
// SIPCluster with its delete-for-move annotation; the services here go,
// the hosts keep their labels (the cluster lives on where it moved).
func TestDeleteForMoveKeepsHosts(t *testing.T) {
	s := newSite(t, "sip-move")
	s.host("cp-1", "cp", "r1", "127.0.5.1")
	s.host("w-1", "w", "r1", "127.0.5.2")
	startOperator(t)
	s.cluster("tenant", 1, 0, 1, nil)
	s.waitReady("tenant", sipv1.ReasonTypeReconciliationSucceeded)
	s.waitLabels("tenant", "cp-1=ControlPlane", "w-1=Worker")

	patchCluster(t, s.ns, "tenant", func(c *sipv1.SIPCluster) {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[sipcluster.DeleteForMoveAnnotation] = ""
	})
	if err := env.Client.Delete(context.Background(), &sipv1.SIPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "tenant"}}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "tenant"}, &sipv1.SIPCluster{})), nil
	}); err != nil {
		t.Fatal("the SIPCluster deleted for a move was kept")
	}
	// Gone means decommission ran and let the finalizer go.
	if got := s.labelled("tenant"); !slices.Equal(got, []string{"cp-1=ControlPlane", "w-1=Worker"}) {
		t.Errorf("hosts after the move's delete: %v, want their labels kept", got)
	}
	var deps appsv1.DeploymentList
	if err := env.Client.List(context.Background(), &deps, client.InNamespace(s.ns), client.MatchingLabels{sipv1.ClusterNameLabel: "tenant"}); err != nil {
		t.Fatal(err)
	}
	if len(deps.Items) != 0 {
		t.Errorf("%d service Deployments left after the move's delete", len(deps.Items))
	}
}
