package sipcluster_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/sip/sipoperator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

var env *testenv.Env

// TestMain starts one full local control plane (Deployments become
// Available under kwok) for every test; tests keep apart by namespace and
// by a flavor label of their own.
func TestMain(m *testing.M) {
	os.Exit(testenv.MainFull(m, testenv.Options{
		CRDDirs:     []string{"config/sip/crd/bases", "config/metal3/crd/bases"},
		AddToScheme: []func(*runtime.Scheme) error{sipv1.AddToScheme, metal3v1alpha1.AddToScheme},
	}, &env))
}

// startOperator runs the operator in-process until the test ends.
func startOperator(t *testing.T) {
	t.Helper()
	startOperatorLogging(t, logr.Discard())
}

// startOperatorLogging is startOperator with the operator's log going to
// logger.
func startOperatorLogging(t *testing.T, logger logr.Logger) {
	t.Helper()
	o := sipoperator.DefaultOptions()
	o.LeaderElection = false
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.SkipControllerNameValidation = true
	o.Resync = 2 * time.Second
	mgr, err := sipoperator.NewManager(context.Background(), env.Config, o, logger)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, context.Background(), "manager", mgr.Start)
}

// site is one test's namespace and hosts.
type site struct {
	t      *testing.T
	ns     string
	flavor string
}

func newSite(t *testing.T, ns string) *site {
	t.Helper()
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return &site{t: t, ns: ns, flavor: ns}
}

// host creates a BareMetalHost with a networkData Secret giving it ip on
// network oam-ipv4 (link enp1s0), and a BMC Secret.
func (s *site) host(name, role, rack, ip string) {
	s.t.Helper()
	ctx := context.Background()
	nd := fmt.Sprintf(`{"links":[{"id":"enp1s0","type":"phy"}],"networks":[{"id":"oam-ipv4","link":"enp1s0","type":"ipv4","ip_address":%q}],"services":[]}`, ip)
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name + "-network-data"}, Data: map[string][]byte{"networkData": []byte(nd)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name + "-bmc"}, Data: map[string][]byte{"username": []byte("admin"), "password": []byte("bmc-pw-" + name)}},
		&metal3v1alpha1.BareMetalHost{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name, Labels: map[string]string{"flavor": s.flavor + "-" + role, "rack": rack}},
			Spec: metal3v1alpha1.BareMetalHostSpec{
				BMC:         metal3v1alpha1.BMCDetails{Address: "redfish+http://127.0.0.1:8000/redfish/v1/Systems/" + name, CredentialsName: name + "-bmc"},
				NetworkData: &corev1.SecretReference{Name: name + "-network-data", Namespace: s.ns},
			},
		},
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			s.t.Fatal(err)
		}
	}
}

// cluster creates a SIPCluster asking for cp control-plane hosts (+cps
// standby) one per rack, w workers anywhere, and a control-plane load
// balancer.
func (s *site) cluster(name string, cp, cps, w int, mutate func(*sipv1.SIPCluster)) *sipv1.SIPCluster {
	s.t.Helper()
	c := &sipv1.SIPCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name},
		Spec: sipv1.SIPClusterSpec{
			Nodes: map[sipv1.BMHRole]sipv1.NodeSet{
				sipv1.RoleControlPlane: {LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"flavor": s.flavor + "-cp"}}, TopologyKey: "rack", Count: &sipv1.NodeCount{Active: cp, Standby: cps}},
				sipv1.RoleWorker:       {LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"flavor": s.flavor + "-w"}}, Count: &sipv1.NodeCount{Active: w}},
			},
			Services: sipv1.SIPClusterServices{
				LoadBalancerControlPlane: []sipv1.LoadBalancerServiceControlPlane{{SIPClusterService: sipv1.SIPClusterService{Image: "haproxy:2.8", NodeInterface: "oam-ipv4"}, NodePort: nextNodePort()}},
			},
		},
	}
	if mutate != nil {
		mutate(c)
	}
	if err := env.Client.Create(context.Background(), c); err != nil {
		s.t.Fatal(err)
	}
	return c
}

// waitReady waits for the cluster's Ready condition to have reason.
func (s *site) waitReady(name, reason string) *sipv1.SIPCluster {
	s.t.Helper()
	c := &sipv1.SIPCluster{}
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: name}, c); err != nil {
			return false, err
		}
		cond := apimeta.FindStatusCondition(c.Status.Conditions, sipv1.ConditionTypeReady)
		if cond == nil {
			return false, nil
		}
		last = cond.Reason + ": " + cond.Message
		return cond.Reason == reason && cond.ObservedGeneration == c.Generation, nil
	})
	if err != nil {
		s.t.Fatalf("SIPCluster %s never %s (last %s)", name, reason, last)
	}
	return c
}

// labelled returns "host=role[/standby]" for every host of the namespace
// labelled for cluster name.
func (s *site) labelled(name string) []string {
	s.t.Helper()
	var list metal3v1alpha1.BareMetalHostList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(s.ns)); err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, b := range list.Items {
		l := b.Labels
		if l[sipv1.ClusterNameLabel] != name {
			if l[sipv1.ClusterNameLabel] == "" && (l[sipv1.NodeTypeLabel] != "" || l[sipv1.StandbyLabel] != "" || l[sipv1.ClusterNamespaceLabel] != "") {
				out = append(out, b.Name+"=stray labels")
			}
			continue
		}
		if l[sipv1.ClusterNamespaceLabel] != s.ns {
			out = append(out, b.Name+"=wrong namespace label")
		}
		v := b.Name + "=" + l[sipv1.NodeTypeLabel]
		if l[sipv1.StandbyLabel] == "true" {
			v += "/standby"
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// waitLabels waits until the cluster's hosts are exactly want.
func (s *site) waitLabels(name string, want ...string) {
	s.t.Helper()
	slices.Sort(want)
	var got []string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got = s.labelled(name)
		return slices.Equal(got, want), nil
	})
	if err != nil {
		s.t.Fatalf("hosts of %s: %v, want %v", name, got, want)
	}
}

// haproxyConfig returns the control-plane load balancer's configuration.
func (s *site) haproxyConfig(cluster string) string {
	s.t.Helper()
	var cms corev1.ConfigMapList
	if err := env.Client.List(context.Background(), &cms, client.InNamespace(s.ns), client.MatchingLabels{sipv1.ClusterNameLabel: cluster}); err != nil {
		s.t.Fatal(err)
	}
	for _, cm := range cms.Items {
		for _, v := range cm.Data {
			if strings.Contains(v, ":6443") && strings.Contains(v, "backend") {
				return v
			}
		}
	}
	s.t.Fatalf("no HAProxy configuration among %d ConfigMaps of %s", len(cms.Items), cluster)
	return ""
}

func servers(cfg string) []string {
	var out []string
	for _, l := range strings.Split(cfg, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == "server" {
			out = append(out, f[1]+"@"+f[2])
		}
	}
	slices.Sort(out)
	return out
}

func (s *site) waitServers(cluster string, want ...string) {
	s.t.Helper()
	slices.Sort(want)
	var got []string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got = servers(s.haproxyConfig(cluster))
		return slices.Equal(got, want), nil
	})
	if err != nil {
		s.t.Fatalf("HAProxy servers of %s: %v, want %v", cluster, got, want)
	}
}

func (s *site) update(name string, mutate func(*metal3v1alpha1.BareMetalHost), status bool) {
	s.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		b := &metal3v1alpha1.BareMetalHost{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: name}, b); err != nil {
			return false, err
		}
		mutate(b)
		var err error
		if status {
			err = env.Client.Status().Update(ctx, b)
		} else {
			err = env.Client.Update(ctx, b)
		}
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// nodePorts hands out node ports: Services of every test share one API server.
var nodePorts = 30100

func nextNodePort() int {
	nodePorts++
	return nodePorts
}

func readyMessage(c *sipv1.SIPCluster) string {
	if cond := apimeta.FindStatusCondition(c.Status.Conditions, sipv1.ConditionTypeReady); cond != nil {
		return cond.Message
	}
	return ""
}

func patchCluster(t *testing.T, ns, name string, mutate func(*sipv1.SIPCluster)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		c := &sipv1.SIPCluster{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
			return false, err
		}
		mutate(c)
		err := env.Client.Update(ctx, c)
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func itemsOf(list client.ObjectList) []runtime.Object {
	items, _ := apimeta.ExtractList(list)
	return items
}
