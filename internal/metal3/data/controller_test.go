package data_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
	"github.com/airshipit/airship-go/internal/metal3/data"
	"github.com/airshipit/airship-go/internal/metal3/ipam"
	"github.com/airshipit/airship-go/internal/metal3/metal3test"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

var env *testenv.Env

// TestMain starts one API server with the Metal3 CRDs (config/metal3) and
// Cluster API's Cluster and Machine CRDs (from the cluster-api module this
// project requires); tests keep apart by namespace.
//
// Fuzzing (FuzzRender) needs no API server: a fuzz run, whose every worker
// process runs TestMain, starts none.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	os.Exit(testenv.Main(m, func() (*testenv.Env, error) {
		capi, err := capienv.CoreCRDs()
		if err != nil {
			return nil, err
		}
		e, err := testenv.NewAPI(testenv.Options{
			CRDDirs: []string{"config/metal3/crd/bases", capi},
			AddToScheme: []func(*runtime.Scheme) error{
				infrav1.AddToScheme, ipamv1.AddToScheme, metal3v1alpha1.AddToScheme, clusterv1.AddToScheme,
			},
		})
		if err != nil {
			return nil, err
		}
		// v1beta2 is stored: the v1beta1 objects convert through the webhook.
		stop, err := metal3test.StartConversion(e)
		if err != nil {
			return nil, errors.Join(err, e.Stop())
		}
		e.BeforeStop(stop)
		return e, nil
	}, func(e *testenv.Env) { env = e }))
}

// startManager runs the IPPool, Metal3DataTemplate and Metal3Data
// controllers until the test ends.
func startManager(t *testing.T) {
	t.Helper()
	mgr := testenv.NewManager(t, env)
	if err := ipam.SetupWithManager(context.Background(), mgr, ipam.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := data.SetupWithManager(context.Background(), mgr, data.Options{Concurrency: 4}); err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, context.Background(), "manager", mgr.Start)
}

// site is one test's namespace.
type site struct {
	t  *testing.T
	ns string
}

func newSite(t *testing.T, prefix string) *site {
	t.Helper()
	return &site{t: t, ns: testenv.Namespace(t, env, prefix)}
}

func (s *site) create(objs ...client.Object) {
	s.t.Helper()
	for _, o := range objs {
		o.SetNamespace(s.ns)
		if err := env.Client.Create(context.Background(), o); err != nil {
			s.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func addr(s string) *ipamv1.IPAddressStr { a := ipamv1.IPAddressStr(s); return &a }

// pool creates an IPPool of the addresses first..last.
func (s *site) pool(name, first, last string) {
	s.t.Helper()
	s.create(&ipamv1.IPPool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: ipamv1.IPPoolSpec{
		ClusterName: ptr.To("test1"),
		NamePrefix:  name,
		Prefix:      24,
		Gateway:     addr("192.168.1.1"),
		DNSServers:  []ipamv1.IPAddressStr{"8.8.8.8"},
		Pools:       []ipamv1.Pool{{Start: addr(first), End: addr(last)}},
	}})
}

// template creates a Metal3DataTemplate from its spec in YAML.
func (s *site) template(name, spec string) {
	s.t.Helper()
	t := &infrav1.Metal3DataTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: "test1"}}}
	if err := yaml.UnmarshalStrict([]byte(spec), &t.Spec); err != nil {
		s.t.Fatal(err)
	}
	s.create(t)
}

// machine creates what the Metal3Machine controller and Cluster API would
// have made for one machine: a BareMetalHost (inspected, NIC eth0 with
// mac), a Machine, a Metal3Machine owned by it and annotated with the
// host, and the Metal3DataClaim of the Metal3Machine's name.
func (s *site) machine(name, template, mac string) {
	s.t.Helper()
	ctx := context.Background()
	host := &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "host-" + name}, Spec: metal3v1alpha1.BareMetalHostSpec{BootMACAddress: mac}}
	s.create(host)
	host.Status.HardwareDetails = &metal3v1alpha1.HardwareDetails{NIC: []metal3v1alpha1.NIC{{Name: "eth0", MAC: mac}}}
	if err := env.Client.Status().Update(ctx, host); err != nil {
		s.t.Fatal(err)
	}
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "machine-" + name, Labels: map[string]string{clusterv1.ClusterNameLabel: "test1"}}, Spec: clusterv1.MachineSpec{
		ClusterName:       "test1",
		Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("bootstrap")},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name},
	}}
	s.create(m)
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "test1"},
			Annotations:     map[string]string{infrav1.HostAnnotation: s.ns + "/" + host.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}},
		},
		Spec: infrav1.Metal3MachineSpec{DataTemplate: &corev1.ObjectReference{Name: template}},
	}
	s.create(m3m)
	s.create(&infrav1.Metal3DataClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "test1"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Machine", Name: name, UID: m3m.UID, Controller: ptr.To(true)}},
		},
		Spec: infrav1.Metal3DataClaimSpec{Template: corev1.ObjectReference{Name: template}},
	})
}

func (s *site) get(name string, o client.Object) error {
	return env.Client.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: name}, o)
}

// gone reports whether the object of that name is not there.
func (s *site) gone(name string, o client.Object) (bool, error) {
	err := s.get(name, o)
	return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
}

func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: timed out (last error: %v)", what, last)
	}
}

// readyData waits for the claim's Metal3Data to be ready and returns it.
func (s *site) readyData(claim string) *infrav1.Metal3Data {
	s.t.Helper()
	d := &infrav1.Metal3Data{}
	eventually(s.t, "Metal3Data of claim "+claim+" ready", func() (bool, error) {
		c := &infrav1.Metal3DataClaim{}
		if err := s.get(claim, c); err != nil || c.Status.RenderedData == nil {
			return false, err
		}
		if err := s.get(c.Status.RenderedData.Name, d); err != nil {
			return false, err
		}
		if !d.Status.Ready {
			return false, fmt.Errorf("not ready: %s", ptr.Deref(d.Status.ErrorMessage, ""))
		}
		return true, nil
	})
	return d
}

func (s *site) secret(name, key string) string {
	s.t.Helper()
	sec := &corev1.Secret{}
	if err := s.get(name, sec); err != nil {
		s.t.Fatal(err)
	}
	if sec.Type != infrav1.DataSecretType {
		s.t.Errorf("Secret %s type %q, want %q", name, sec.Type, infrav1.DataSecretType)
	}
	return string(sec.Data[key])
}

const fullTemplate = `
clusterName: test1
metaData:
  strings:
  - {key: role, value: worker}
  objectNames:
  - {key: name, object: machine}
  - {key: hostname, object: baremetalhost}
  indexes:
  - {key: local-hostname, prefix: node-}
  ipAddressesFromIPPool:
  - {key: ip, name: oam}
  prefixesFromIPPool:
  - {key: prefix, name: oam}
  gatewaysFromIPPool:
  - {key: gateway, name: oam}
  fromHostInterfaces:
  - {key: mac, interface: eth0}
networkData:
  links:
    ethernets:
    - type: phy
      id: enp1s0
      mtu: 1500
      macAddress: {fromHostInterface: eth0}
  networks:
    ipv4:
    - id: oam-ipv4
      link: enp1s0
      ipAddressFromIPPool: oam
      routes:
      - network: 0.0.0.0
        gateway: {fromIPPool: oam}
  services:
    dnsFromIPPool: oam
`

// TestClaimRendersSecrets: a claim gets a Metal3Data of index 0 and
// Secrets whose content is the template rendered with the pool's first
// address and the host's MAC; deleting the claim releases the index, the
// Metal3Data, its Secrets, its IPClaim and the address.
func TestClaimRendersSecrets(t *testing.T) {
	s := newSite(t, "render")
	startManager(t)
	s.pool("oam", "192.168.1.10", "192.168.1.19")
	s.template("workers", fullTemplate)
	s.machine("worker-a", "workers", "52:54:00:00:00:0a")

	d := s.readyData("worker-a")
	if d.Name != "workers-0" || d.Spec.Index != 0 {
		t.Errorf("Metal3Data %s index %d, want workers-0 index 0", d.Name, d.Spec.Index)
	}
	if d.Spec.MetaData == nil || d.Spec.MetaData.Name != "worker-a-metadata" || d.Spec.NetworkData == nil || d.Spec.NetworkData.Name != "worker-a-networkdata" {
		t.Fatalf("Secrets named %v %v, want worker-a-metadata and worker-a-networkdata", d.Spec.MetaData, d.Spec.NetworkData)
	}
	wantMeta := `gateway: 192.168.1.1
hostname: host-worker-a
ip: 192.168.1.10
local-hostname: node-0
mac: 52:54:00:00:00:0a
name: machine-worker-a
prefix: "24"
providerid: ` + s.ns + `/host-worker-a/worker-a
role: worker
`
	if got := s.secret("worker-a-metadata", "metaData"); got != wantMeta {
		t.Errorf("metaData:\n%s\nwant:\n%s", got, wantMeta)
	}
	wantNet := `links:
- ethernet_mac_address: 52:54:00:00:00:0a
  id: enp1s0
  mtu: 1500
  type: phy
networks:
- id: oam-ipv4
  ip_address: 192.168.1.10
  link: enp1s0
  netmask: 255.255.255.0
  routes:
  - gateway: 192.168.1.1
    netmask: 0.0.0.0
    network: 0.0.0.0
    services: []
  type: ipv4
services:
- address: 8.8.8.8
  type: dns
`
	if got := s.secret("worker-a-networkdata", "networkData"); got != wantNet {
		t.Errorf("networkData:\n%s\nwant:\n%s", got, wantNet)
	}
	ipc := &ipamv1.IPClaim{}
	if err := s.get("workers-0-oam", ipc); err != nil {
		t.Fatalf("IPClaim workers-0-oam: %v", err)
	}
	if !metav1.IsControlledBy(ipc, d) || ipc.Status.Address == nil || ipc.Status.Address.Name != "oam-192-168-1-10" {
		t.Errorf("IPClaim owners %v address %v", ipc.OwnerReferences, ipc.Status.Address)
	}
	tmpl := &infrav1.Metal3DataTemplate{}
	if err := s.get("workers", tmpl); err != nil {
		t.Fatal(err)
	}
	if idx, ok := tmpl.Status.Indexes["worker-a"]; !ok || idx != 0 {
		t.Errorf("template status.indexes = %v, want worker-a: 0", tmpl.Status.Indexes)
	}

	if err := env.Client.Delete(context.Background(), &infrav1.Metal3DataClaim{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "worker-a"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "claim, Metal3Data, Secrets, IPClaim and IPAddress gone", func() (bool, error) {
		for _, o := range []struct {
			name string
			obj  client.Object
		}{
			{"worker-a", &infrav1.Metal3DataClaim{}}, {"workers-0", &infrav1.Metal3Data{}},
			{"worker-a-metadata", &corev1.Secret{}}, {"worker-a-networkdata", &corev1.Secret{}},
			{"workers-0-oam", &ipamv1.IPClaim{}}, {"oam-192-168-1-10", &ipamv1.IPAddress{}},
		} {
			g, err := s.gone(o.name, o.obj)
			if err != nil {
				return false, fmt.Errorf("%T %s: %w", o.obj, o.name, err)
			}
			if !g {
				return false, fmt.Errorf("%T %s still there", o.obj, o.name)
			}
		}
		return true, nil
	})
	eventually(t, "index and address released in the statuses", func() (bool, error) {
		pool := &ipamv1.IPPool{}
		if err := s.get("workers", tmpl); err != nil {
			return false, err
		}
		if err := s.get("oam", pool); err != nil {
			return false, err
		}
		return len(tmpl.Status.Indexes) == 0 && len(pool.Status.Allocations) == 0, nil
	})
}

// TestRenderErrorNamesField: a template that cannot be rendered for the
// host reports the failing field in the Metal3Data's status.
func TestRenderErrorNamesField(t *testing.T) {
	s := newSite(t, "badnic")
	startManager(t)
	s.template("bad", `
clusterName: test1
metaData:
  fromHostInterfaces:
  - {key: mac, interface: eth9}
`)
	s.machine("worker-b", "bad", "52:54:00:00:00:0b")
	eventually(t, "error in status", func() (bool, error) {
		d := &infrav1.Metal3Data{}
		if err := s.get("bad-0", d); err != nil {
			return false, err
		}
		msg := ptr.Deref(d.Status.ErrorMessage, "")
		return !d.Status.Ready && strings.Contains(msg, "spec.metaData.fromHostInterfaces[0].interface") && strings.Contains(msg, `no NIC named "eth9"`), fmt.Errorf("status %q", msg)
	})
}

// TestTwentyOneClaimsOnTwentyAddresses: 21 machines claim at once from a
// template whose network takes an address from a pool of 20. 20 get
// distinct addresses and indexes 0-20 are given once each; the 21st waits
// with an error saying the pool is exhausted. Deleting one claim gives its
// address to the waiting one, and its index to the next claim.
func TestTwentyOneClaimsOnTwentyAddresses(t *testing.T) {
	s := newSite(t, "twenty")
	startManager(t)
	s.pool("oam", "192.168.1.101", "192.168.1.120")
	s.template("workers", `
clusterName: test1
networkData:
  links:
    ethernets:
    - {type: phy, id: enp1s0, mtu: 1500, macAddress: {fromHostInterface: eth0}}
  networks:
    ipv4:
    - {id: oam, link: enp1s0, ipAddressFromIPPool: oam}
`)
	var wg sync.WaitGroup
	for i := range 21 {
		wg.Go(func() { s.machine(fmt.Sprintf("w%02d", i), "workers", fmt.Sprintf("52:54:00:00:01:%02x", i)) })
	}
	wg.Wait()

	ipOf := func(d *infrav1.Metal3Data) string {
		var nd struct {
			Networks []struct {
				IP string `json:"ip_address"`
			} `json:"networks"`
		}
		if err := yaml.Unmarshal([]byte(s.secret(d.Spec.NetworkData.Name, "networkData")), &nd); err != nil || len(nd.Networks) != 1 {
			t.Fatalf("networkData of %s: %v", d.Name, err)
		}
		return nd.Networks[0].IP
	}
	var ready, waiting []infrav1.Metal3Data
	eventually(t, "20 Metal3Data ready, 1 waiting on the exhausted pool", func() (bool, error) {
		var list infrav1.Metal3DataList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(s.ns)); err != nil {
			return false, err
		}
		ready, waiting = nil, nil
		for _, d := range list.Items {
			if d.Status.Ready {
				ready = append(ready, d)
			} else if strings.Contains(ptr.Deref(d.Status.ErrorMessage, ""), "is exhausted") {
				waiting = append(waiting, d)
			}
		}
		return len(ready) == 20 && len(waiting) == 1, fmt.Errorf("%d ready, %d exhausted of %d", len(ready), len(waiting), len(list.Items))
	})
	ips, indexes := map[string]string{}, map[int]string{}
	for i := range ready {
		d := &ready[i]
		ip := ipOf(d)
		if other, dup := ips[ip]; dup {
			t.Fatalf("%s given to %s and %s", ip, d.Name, other)
		}
		ips[ip] = d.Name
	}
	for _, d := range append(ready, waiting...) {
		if other, dup := indexes[d.Spec.Index]; dup {
			t.Fatalf("index %d given to %s and %s", d.Spec.Index, d.Name, other)
		}
		indexes[d.Spec.Index] = d.Name
	}
	if len(indexes) != 21 {
		t.Errorf("%d distinct indexes, want 21", len(indexes))
	}
	msg := *waiting[0].Status.ErrorMessage
	if !strings.Contains(msg, "spec.networkData.networks.ipv4[0].ipAddressFromIPPool") || !strings.Contains(msg, "IPPool "+s.ns+"/oam is exhausted") {
		t.Errorf("waiting Metal3Data says %q; want the field and the exhausted pool", msg)
	}

	// Free one address and one index.
	victim := ready[7]
	freedIP, freedIndex := ipOf(&victim), victim.Spec.Index
	if err := env.Client.Delete(context.Background(), &infrav1.Metal3DataClaim{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: victim.Spec.Claim.Name}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the waiting Metal3Data rendered with the freed address", func() (bool, error) {
		d := &infrav1.Metal3Data{}
		if err := s.get(waiting[0].Name, d); err != nil {
			return false, err
		}
		return d.Status.Ready, nil
	})
	d := &infrav1.Metal3Data{}
	if err := s.get(waiting[0].Name, d); err != nil {
		t.Fatal(err)
	}
	if got := ipOf(d); got != freedIP {
		t.Errorf("waiting Metal3Data got %s, want the freed %s", got, freedIP)
	}
	eventually(t, "the deleted claim's Metal3Data gone", func() (bool, error) { return s.gone(victim.Name, &infrav1.Metal3Data{}) })
	s.machine("late", "workers", "52:54:00:00:02:00")
	eventually(t, "the next claim given the freed index", func() (bool, error) {
		c := &infrav1.Metal3DataClaim{}
		if err := s.get("late", c); err != nil || c.Status.RenderedData == nil {
			return false, err
		}
		return c.Status.RenderedData.Name == data.DataName("workers", freedIndex), fmt.Errorf("got %s", c.Status.RenderedData.Name)
	})
}

// TestDeletedDataIsReplaced: a Metal3Data deleted while its claim lives is
// replaced by one of a new index; its Secrets are rendered again for the
// new one once the old one has taken its own away.
func TestDeletedDataIsReplaced(t *testing.T) {
	s := newSite(t, "replace")
	startManager(t)
	s.pool("oam", "192.168.1.10", "192.168.1.19")
	s.template("workers", fullTemplate)
	s.machine("worker-c", "workers", "52:54:00:00:00:0c")
	old := s.readyData("worker-c")
	if err := env.Client.Delete(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	eventually(t, "old Metal3Data gone", func() (bool, error) { return s.gone(old.Name, &infrav1.Metal3Data{}) })
	d := s.readyData("worker-c")
	if d.Name != "workers-1" {
		t.Errorf("replacement %s, want workers-1", d.Name)
	}
	for _, name := range []string{"worker-c-metadata", "worker-c-networkdata"} {
		sec := &corev1.Secret{}
		if err := s.get(name, sec); err != nil {
			t.Fatal(err)
		}
		if !metav1.IsControlledBy(sec, d) {
			t.Errorf("Secret %s owned by %v, want %s", name, sec.OwnerReferences, d.Name)
		}
	}
	if !strings.Contains(s.secret("worker-c-metadata", "metaData"), "local-hostname: node-1") {
		t.Errorf("metaData not rendered for index 1:\n%s", s.secret("worker-c-metadata", "metaData"))
	}
}
