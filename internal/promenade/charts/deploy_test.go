package charts

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	promv1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/armada/armadaoperator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestArmadaDeploysChartsInOrder: armada-operator deploys the manifest,
// each chart's values in a Secret it reads through spec.valuesFrom, onto
// the local control plane in full mode (kwok nodes run the anchors' and
// Deployments' pods), every chart ends deployed and satisfied, and each
// group's charts were satisfied no later than the next group's (so
// kube-proxy after HAProxy, Calico after its etcd, DNS after Calico). The
// per-node DaemonSets (HAProxy, kube-proxy, calico-node) skip the node
// marked as not Promenade's; kube-proxy and Calico run as their charts
// specify.
func TestArmadaDeploysChartsInOrder(t *testing.T) {
	vals, err := Values(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	chartsDir, err := filepath.Abs(filepath.Join(root, Dir))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Manifest(vals, ManifestOptions{Namespace: "armada", ChartsDir: chartsDir, Timeout: 120, ValuesSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.StartFull(t, testenv.Options{Nodes: 4, CRDDirs: []string{"config/armada/crd/bases"},
		AddToScheme: []func(*runtime.Scheme) error{armadav1.AddToScheme}})
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.Client

	// Two control-plane nodes and a worker, labelled as the site labels them,
	// and a node marked as not Promenade's.
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	for i := range nodes.Items {
		n := &nodes.Items[i]
		patch := client.MergeFrom(n.DeepCopy())
		switch i {
		case 0, 1:
			for _, l := range []string{"kubernetes-apiserver", "kubernetes-controller-manager", "kubernetes-scheduler", "kubernetes-etcd", "calico-etcd"} {
				n.Labels[l] = "enabled"
			}
		case 3:
			n.Labels[promv1.AnchorsLabel] = promv1.AnchorsDisabled
		}
		if err := c.Patch(ctx, n, patch); err != nil {
			t.Fatal(err)
		}
	}
	masters := map[string]bool{nodes.Items[0].Name: true, nodes.Items[1].Name: true}
	notOurs := nodes.Items[3].Name

	opts := armadaoperator.DefaultOptions()
	opts.MetricsAddr, opts.ProbeAddr, opts.LeaderElection = "0", "0", false
	opts.SkipControllerNameValidation = true
	opts.PollInterval = time.Second
	mgr, err := armadaoperator.NewManager(ctx, env.Config, opts, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	mgrCtx, stopMgr := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := mgr.Start(mgrCtx); err != nil {
			t.Errorf("operator: %v", err)
		}
	}()
	defer wg.Wait()
	defer stopMgr()

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "armada"}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}

	// Record when each chart is first seen satisfied: one time per poll,
	// as charts seen in the same list cannot be told apart.
	satisfiedAt := map[string]time.Duration{}
	var last string
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var list armadav1.ArmadaChartList
		if err := c.List(ctx, &list, client.InNamespace("armada")); err != nil {
			return false, err
		}
		seen := time.Since(start)
		var pending []string
		for _, a := range list.Items {
			if a.Status.Satisfied && a.Status.State == armadav1.StateDeployed {
				if _, ok := satisfiedAt[a.Name]; !ok {
					satisfiedAt[a.Name] = seen
				}
			} else {
				msg := ""
				for _, cond := range a.Status.Conditions {
					if cond.Type == "Ready" {
						msg = ": " + cond.Message
					}
				}
				pending = append(pending, a.Name+"="+string(a.Status.State)+msg)
			}
		}
		var amf armadav1.ArmadaManifest
		if err := c.Get(ctx, client.ObjectKey{Namespace: "armada", Name: "promenade"}, &amf); err != nil {
			return false, err
		}
		last = strings.Join(pending, "\n")
		return amf.Status.Satisfied && len(pending) == 0 && len(list.Items) == len(Names()), nil
	})
	if err != nil {
		t.Fatalf("manifest not satisfied: %v; pending: %s", err, last)
	}
	t.Logf("manifest applied to all %d charts satisfied: %s", len(Names()), time.Since(start).Round(100*time.Millisecond))
	for i := 1; i < len(Groups); i++ {
		for _, before := range Groups[i-1].Charts {
			for _, after := range Groups[i].Charts {
				if satisfiedAt[before] > satisfiedAt[after] {
					t.Errorf("%s (group %s) satisfied at %s, after %s (group %s) at %s", before, Groups[i-1].Name, satisfiedAt[before],
						after, Groups[i].Name, satisfiedAt[after])
				}
			}
		}
	}
	t.Logf("satisfied at: %v", satisfiedAt)

	// The waits had something to wait for: each anchor runs, ready, on the
	// nodes its selector picks (HAProxy on the three that are Promenade's),
	// kube-proxy and calico-node on those three as well.
	for _, d := range []struct{ name, release string }{
		{"apiserver-anchor", "apiserver"}, {"controller-manager-anchor", "controller-manager"}, {"scheduler-anchor", "scheduler"},
		{"etcd-anchor", "etcd"}, {"calico-etcd-anchor", "calico-etcd"}, {"haproxy-anchor", "haproxy"},
		{"kube-proxy", "kube-proxy"}, {"calico-node", "calico"},
	} {
		var ds appsv1.DaemonSet
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: d.name}, &ds); err != nil {
			t.Fatal(err)
		}
		want := int32(2)
		if d.name == "haproxy-anchor" || d.release == "kube-proxy" || d.release == "calico" {
			want = 3
		}
		if ds.Status.DesiredNumberScheduled != want || ds.Status.NumberReady != want || ds.Annotations["meta.helm.sh/release-name"] != "promenade-"+d.release {
			t.Errorf("DaemonSet %s: %d desired, %d ready (want %d), release %q", ds.Name, ds.Status.DesiredNumberScheduled, ds.Status.NumberReady, want,
				ds.Annotations["meta.helm.sh/release-name"])
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(Namespace), client.MatchingLabels(ds.Spec.Selector.MatchLabels)); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == notOurs {
				t.Errorf("DaemonSet %s runs pod %s on %s, which is marked %s=%s", ds.Name, p.Name, notOurs, promv1.AnchorsLabel, promv1.AnchorsDisabled)
			}
		}
	}

	// kube-proxy and Calico as installed: on the hosts' network, every
	// taint tolerated, kube-proxy's kubeconfig and Calico's etcd client
	// certificate mounted from what their charts installed.
	var proxy appsv1.DaemonSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "kube-proxy"}, &proxy); err != nil {
		t.Fatal(err)
	}
	checkEveryNode(t, &proxy)
	pc := proxy.Spec.Template.Spec.Containers[0]
	var proxyCM corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "kube-proxy"}, &proxyCM); err != nil {
		t.Fatal(err)
	}
	var proxySecret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "kube-proxy"}, &proxySecret); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(proxyCM.Data["config.yaml"], "kubeconfig: "+mountOf(pc, "config")+"/kubeconfig.yaml") ||
		!strings.Contains(proxyCM.Data["kubeconfig.yaml"], "client-certificate: "+mountOf(pc, "pki")+"/kube-proxy.pem") ||
		len(proxySecret.Data["kube-proxy.pem"]) == 0 || len(proxySecret.Data["kube-proxy-key.pem"]) == 0 {
		t.Errorf("kube-proxy's kubeconfig does not name the certificate it mounts:\n%s\n%s", proxyCM.Data["config.yaml"], proxyCM.Data["kubeconfig.yaml"])
	}
	var calicoNode appsv1.DaemonSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "calico-node"}, &calicoNode); err != nil {
		t.Fatal(err)
	}
	checkEveryNode(t, &calicoNode)
	var etcdSecret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "calico-etcd-secrets"}, &etcdSecret); err != nil {
		t.Fatal(err)
	}
	checkPair(t, "calico-etcd-secrets", string(etcdSecret.Data["etcd-ca"]), string(etcdSecret.Data["etcd-cert"]), string(etcdSecret.Data["etcd-key"]), "calico-node")
	var kc appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "calico-kube-controllers"}, &kc); err != nil {
		t.Fatal(err)
	}
	if kc.Status.ReadyReplicas != 1 || !kc.Spec.Template.Spec.HostNetwork {
		t.Errorf("calico-kube-controllers: %d ready, hostNetwork %v", kc.Status.ReadyReplicas, kc.Spec.Template.Spec.HostNetwork)
	}
	var kcPods corev1.PodList
	if err := c.List(ctx, &kcPods, client.InNamespace(Namespace), client.MatchingLabels(kc.Spec.Selector.MatchLabels)); err != nil {
		t.Fatal(err)
	}
	for _, p := range kcPods.Items {
		if !masters[p.Spec.NodeName] {
			t.Errorf("calico-kube-controllers pod %s on %s, not with the controller managers", p.Name, p.Spec.NodeName)
		}
	}
}
