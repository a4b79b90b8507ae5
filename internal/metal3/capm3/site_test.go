package capm3_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/metal3/metal3operator"
	"github.com/airshipit/airship-go/internal/metal3/metal3test"
	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// bmcPassword is every emulated BMC's password in these tests; a test
// checks it never shows in status or events.
const bmcPassword = "pw-capm3-Zq81"

// site is a management cluster running the real Cluster API managers and
// metal3-operator driving a real local Ironic, a workload cluster (a
// second local control plane) and the Redfish emulator, whose hosts
// Ironic provisions through the emulator's deploy agent.
type site struct {
	mgmt, workload *testenv.Env
	emu            *emulator.Server
	ironic         *localironic.Instance
	// image is a small raw disk image with a GPT served by Ironic's image
	// server, with its md5 checksum; imageData its bytes.
	image     infrav1.Image
	imageData []byte
	c         client.Client
	ctx       context.Context
	start     time.Time
	t         *testing.T
}

func (s *site) step(format string, args ...any) {
	s.t.Helper()
	s.t.Logf("[%5.1fs] %s", time.Since(s.start).Seconds(), fmt.Sprintf(format, args...))
}

// startSite brings up the clusters, Cluster API with this provider
// installed by clusterctl init from config/metal3/default, a local Ironic,
// the operator (all controllers) driving it and an emulator of hosts with
// disks and the deploy agent.
func startSite(t *testing.T, hosts []emulator.Host, mutate func(*metal3operator.Options)) *site {
	t.Helper()
	return startSiteWith(t, hosts, mutate, "")
}

// startSiteWith is startSite with Cluster API's managers run with these
// feature gates (their --feature-gates, e.g. "ClusterTopology=true").
func startSiteWith(t *testing.T, hosts []emulator.Host, mutate func(*metal3operator.Options), featureGates string) *site {
	t.Helper()
	s := &site{t: t, start: time.Now(), ctx: t.Context()}
	adds := []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme, infrav1.AddToScheme, ipamv1.AddToScheme, clusterv1.AddToScheme}
	s.mgmt = testenv.StartFull(t, testenv.Options{Nodes: 1, AddToScheme: adds})
	s.workload = testenv.StartFull(t, testenv.Options{Nodes: 1, AddToScheme: adds})
	s.c = s.mgmt.Client
	s.step("management and workload control planes up")
	capienv.Init(t, s.mgmt, capienv.InitOptions{Infrastructure: map[string]string{"metal3": "config/metal3/default"}})
	s.step("clusterctl init: core, kubeadm bootstrap and control plane, metal3")
	capienv.Start(t, s.mgmt, capienv.Options{Name: "mgmt-", FeatureGates: featureGates})
	s.step("Cluster API managers running")
	s.ironic = startIronic(t)
	s.image, s.imageData = serveImage(t, s.ironic, "worker.img")
	s.step("Ironic up")

	var err error
	s.emu, err = emulator.New(emulator.Config{Username: "admin", Password: bmcPassword, Hosts: hosts},
		emulator.Options{Log: testLog{t}, StateDir: t.TempDir(), HeartbeatInterval: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		s.emu.Close()
	})
	if _, err := s.emu.Start(ctx, "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	startOperator(t, s.mgmt, s.ironic, mutate)
	return s
}

// startIronic starts a local Ironic tuned for a test of many hosts on a
// small machine: every host's deploy agent heartbeats every 2 s, Ironic's
// periodic checks come often enough for the tests' limits, and at most 16
// node operations run at once (others are answered busy and retried), so
// that its sqlite database is less often locked.
func startIronic(t *testing.T) *localironic.Instance {
	t.Helper()
	return testenv.Ironic(t, func(o *localironic.Options) {
		o.Tuning = localironic.Tuning{
			ConductorWorkers:               16,
			SyncPowerStateInterval:         30 * time.Second,
			CheckProvisionStateInterval:    10 * time.Second,
			DeployCallbackTimeout:          5 * time.Minute,
			CleanCallbackTimeout:           5 * time.Minute,
			RedfishConnectionAttempts:      3,
			RedfishConnectionRetryInterval: time.Second,
		}
	})
}

// startOperator runs metal3-operator (all controllers and the conversion
// webhook) against env until the test ends, its BareMetalHost controller
// driving inst: the deploy agent downloads images from their URLs, steps
// under way are looked at every second.
func startOperator(t *testing.T, env *testenv.Env, inst *localironic.Instance, mutate func(*metal3operator.Options)) {
	t.Helper()
	o := metal3operator.DefaultOptions()
	o.SkipControllerNameValidation = true
	o.MetricsAddr, o.ProbeAddr, o.LeaderElection = "0", "0", false
	o.PowerPollInterval = 5 * time.Second
	o.IronicEndpoint, o.DeployISO = inst.APIURL, inst.DeployISOURL
	o.IronicImageDownloadSource = "http"
	o.ProvisionPollInterval = time.Second
	// The conversion webhook of the infrastructure kinds, called at its
	// URL by env's API server, its certificate made at start.
	addr := testenv.FreeAddr(t)
	o.Conversion = operatorkit.ConversionWebhook{Addr: addr, URL: "https://" + addr}
	if mutate != nil {
		mutate(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- metal3operator.Run(ctx, env.Config, o, logr.Discard()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("metal3-operator: %v", err)
		}
	})
	// v1beta2 is stored: nothing of v1beta1 is read or written until the
	// CRDs convert through the webhook.
	if o.Conversion.Enabled() {
		metal3test.WaitConversion(t, env.Client, o.Conversion.URL)
	}
}

// serveImage serves a raw disk image of 4 MiB with a GPT and its md5sum
// file (as a site gives one: "<sum>  <name>") from inst's image server,
// and returns it as a Metal3Machine names it, the md5 checksum given by
// value, with the image's bytes.
func serveImage(t *testing.T, inst *localironic.Instance, name string) (infrav1.Image, []byte) {
	t.Helper()
	d := testenv.ServeDiskImage(t, inst, name, 4<<20, testenv.DiskImageOptions{SumFile: metal3v1alpha1.MD5})
	return d.MachineImage(metal3v1alpha1.MD5), d.Raw
}

// machineSpec is a Metal3Machine's spec naming the site's image.
func (s *site) machineSpec() infrav1.Metal3MachineSpec {
	return infrav1.Metal3MachineSpec{Image: s.image}
}

// provisionedDisk checks that Ironic wrote image (its bytes) to the
// host's first disk, with a config drive partition, and returns the
// config drive.
func (s *site) provisionedDisk(host string, image []byte) configdrive.Data {
	s.t.Helper()
	return configdrivetest.ProvisionedDisk(s.t, s.emu.DiskPath(host, "sda"), image)
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Logf("emulator: %s", strings.TrimSpace(string(p)))
	return len(p), nil
}

// namespace creates a namespace for one scenario.
func (s *site) namespace(name string) {
	s.t.Helper()
	if err := s.c.Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		s.t.Fatal(err)
	}
}

// hosts registers emulated hosts as BareMetalHosts in ns, with their BMC
// Secrets, and waits until they are available (enrolled in Ironic and
// inspected). They carry the emulated
// hosts' labels (rack) and labels.
func (s *site) hosts(ns string, hosts []emulator.Host, labels map[string]string) {
	s.t.Helper()
	for _, h := range hosts {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: h.Name + "-bmc-secret"},
			Data: map[string][]byte{"username": []byte("admin"), "password": []byte(bmcPassword)}}
		l := map[string]string{}
		maps.Copy(l, h.Labels)
		maps.Copy(l, labels)
		bmh := &metal3v1alpha1.BareMetalHost{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: h.Name, Labels: l},
			Spec: metal3v1alpha1.BareMetalHostSpec{
				BMC:            metal3v1alpha1.BMCDetails{Address: s.emu.Address(h.Name), CredentialsName: sec.Name},
				BootMACAddress: h.NICs[0].MAC,
			},
		}
		for _, o := range []client.Object{sec, bmh} {
			if err := s.c.Create(s.ctx, o); err != nil {
				s.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
			}
		}
	}
	s.eventually(6*time.Minute, "hosts available", func() (bool, string) {
		var list metal3v1alpha1.BareMetalHostList
		if err := s.c.List(s.ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		n := 0
		for _, h := range list.Items {
			if h.Status.Provisioning.State == metal3v1alpha1.StateAvailable {
				n++
			}
		}
		return n == len(hosts), fmt.Sprintf("%d of %d available", n, len(hosts))
	})
}

// eventually polls cond until it holds, failing the test with cond's last
// message after timeout.
func (s *site) eventually(timeout time.Duration, what string, cond func() (bool, string)) {
	s.t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(s.ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, msg := cond()
		last = msg
		return ok, nil
	})
	if err != nil {
		msg := fmt.Sprintf("%s: %v; last: %s\n%s", what, err, last, s.state())
		// Also straight to stderr: a package's output is cut in CI's
		// summary, and stderr lands just before the test's own log.
		fmt.Fprintf(os.Stderr, "%s [%5.1fs] %s\n", s.t.Name(), time.Since(s.start).Seconds(), msg)
		s.t.Fatal(msg)
	}
}

// state is a short account of the management cluster's Machines,
// Metal3Machines, Metal3Remediations and BareMetalHosts, for a failure.
func (s *site) state() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	var ms clusterv1.MachineList
	if err := s.c.List(ctx, &ms); err != nil {
		fmt.Fprintf(&b, "  Machines: %v\n", err)
	}
	for _, m := range ms.Items {
		var conds []string
		for _, c := range m.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				conds = append(conds, c.Type+"="+string(c.Status)+"/"+c.Reason)
			}
		}
		fmt.Fprintf(&b, "  Machine %s/%s: phase %s deleting %t node %q; not true: %v\n",
			m.Namespace, m.Name, m.Status.Phase, !m.DeletionTimestamp.IsZero(), m.Status.NodeRef.Name, conds)
	}
	var m3ms infrav1.Metal3MachineList
	if err := s.c.List(ctx, &m3ms); err != nil {
		fmt.Fprintf(&b, "  Metal3Machines: %v\n", err)
	}
	for _, m := range m3ms.Items {
		fmt.Fprintf(&b, "  Metal3Machine %s/%s: host %q deleting %t ready %t failure %v\n",
			m.Namespace, m.Name, m.Annotations[infrav1.HostAnnotation], !m.DeletionTimestamp.IsZero(), m.Status.Ready, m.Status.FailureMessage)
	}
	var rems infrav1.Metal3RemediationList
	if err := s.c.List(ctx, &rems); err != nil {
		fmt.Fprintf(&b, "  Metal3Remediations: %v\n", err)
	}
	for _, r := range rems.Items {
		fmt.Fprintf(&b, "  Metal3Remediation %s/%s: phase %s retries %d deleting %t finalizers %v\n",
			r.Namespace, r.Name, r.Status.Phase, r.Status.RetryCount, !r.DeletionTimestamp.IsZero(), r.Finalizers)
	}
	var hosts metal3v1alpha1.BareMetalHostList
	if err := s.c.List(ctx, &hosts); err != nil {
		fmt.Fprintf(&b, "  BareMetalHosts: %v\n", err)
	}
	for _, h := range hosts.Items {
		consumer := ""
		if h.Spec.ConsumerRef != nil {
			consumer = h.Spec.ConsumerRef.Name
		}
		fmt.Fprintf(&b, "  BareMetalHost %s/%s: %s on %t online %t consumer %q error %q %q annotations %v\n",
			h.Namespace, h.Name, h.Status.Provisioning.State, h.Status.PoweredOn, h.Spec.Online, consumer,
			h.Status.ErrorType, h.Status.ErrorMessage, slices.Sorted(maps.Keys(h.Annotations)))
	}
	return b.String()
}

// apply creates the objects of a YAML stream (in order), in ns.
func (s *site) apply(ns, docs string) {
	s.t.Helper()
	for _, doc := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			s.t.Fatalf("decoding %q: %v", doc, err)
		}
		u.SetNamespace(ns)
		if err := s.c.Create(s.ctx, u); err != nil {
			s.t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// workloadCA puts the workload cluster's CA into <cluster>-ca, as Cluster
// API expects, so that its kubeconfig and the bootstrap data trust it.
func (s *site) workloadCA(ns, cluster string) {
	s.t.Helper()
	crt, err := os.ReadFile(filepath.Join(s.workload.StateDir, "pki", "ca.crt"))
	if err != nil {
		s.t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(s.workload.StateDir, "pki", "ca.key"))
	if err != nil {
		s.t.Fatal(err)
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster + "-ca", Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}},
		Type:       "cluster.x-k8s.io/secret",
		Data:       map[string][]byte{"tls.crt": crt, "tls.key": key},
	}
	if err := s.c.Create(s.ctx, sec); err != nil {
		s.t.Fatal(err)
	}
}

// workloadEndpoint is the workload API server's https URL.
func (s *site) workloadEndpoint() string { return s.workload.Config.Host }

func get(s *site, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil
	}
	return u
}

func str(u *unstructured.Unstructured, path ...string) string {
	if u == nil {
		return ""
	}
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}
