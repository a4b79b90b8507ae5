package dashboard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// The hosts: all in one namespace, hostsPerRack to a rack (the first 3 of
// each rack control-plane, the others workers), three in four provisioned
// and the rest available.
const (
	namespace    = "metal3"
	hostsPerRack = 40
	rackLabel    = "rack"
	roleLabel    = "airshipit.org/k8s-role"
	siteLabel    = "airshipit.org/site"
	siteName     = "bench"
)

// defaultSize is the number of hosts when $BENCH_SIZE is unset.
const defaultSize = 10000

// createWorkers is how many hosts are created at once (each a create and
// a status update); none of it is timed.
const createWorkers = 32

func hostName(i int) string { return fmt.Sprintf("bmh-%05d", i) }

// provisioned says whether host i is provisioned (three in four) or
// available.
func provisioned(i int) bool { return i%4 != 3 }

// mac is the i-th host's NIC n's MAC address.
func mac(i, n int) string {
	return fmt.Sprintf("3c:fd:fe:%02x:%02x:%02x", n<<4|i>>16&0xf, i>>8&0xff, i&0xff)
}

// bareMetalHost is host i as a site's documents would have it, with the
// status Metal3 would have given it by now (set apart: the API server
// takes it only through the status subresource).
func bareMetalHost(i int) (*metal3v1alpha1.BareMetalHost, metal3v1alpha1.BareMetalHostStatus) {
	name := hostName(i)
	rack := fmt.Sprintf("rack%03d", i/hostsPerRack)
	role := "worker"
	if i%hostsPerRack < 3 {
		role = "control-plane"
	}
	ip := fmt.Sprintf("10.%d.%d.%d", 20+i>>16, i>>8&0xff, i&0xff)
	h := &metal3v1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name,
			Labels: map[string]string{rackLabel: rack, roleLabel: role, siteLabel: siteName},
		},
		Spec: metal3v1alpha1.BareMetalHostSpec{
			Online:         true,
			BootMACAddress: mac(i, 0),
			BootMode:       metal3v1alpha1.UEFI,
			BMC: metal3v1alpha1.BMCDetails{
				Address:         fmt.Sprintf("redfish+https://10.%d.%d.%d/redfish/v1/Systems/System.Embedded.1", 120+i>>16, i>>8&0xff, i&0xff),
				CredentialsName: name + "-bmc-secret",
			},
			RootDeviceHints: &metal3v1alpha1.RootDeviceHints{DeviceName: "/dev/disk/by-path/pci-0000:18:00.0-scsi-0:2:0:0"},
			Description:     fmt.Sprintf("%s %s, slot %d", rack, role, i%hostsPerRack),
		},
	}
	image := metal3v1alpha1.Image{}
	if provisioned(i) {
		image = metal3v1alpha1.Image{
			URL:          "http://10.23.24.1/images/ubuntu-jammy-k8s-1.32.qcow2",
			Checksum:     "http://10.23.24.1/images/ubuntu-jammy-k8s-1.32.qcow2.sha256sum",
			ChecksumType: metal3v1alpha1.SHA256,
		}
		h.Spec.Image = image.DeepCopy()
		h.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "Metal3Machine", Namespace: namespace, Name: fmt.Sprintf("tenant-%s-%05d", role, i)}
		h.Spec.UserData = &corev1.SecretReference{Namespace: namespace, Name: fmt.Sprintf("tenant-%s-%05d-user-data", role, i)}
	}

	state := metal3v1alpha1.StateAvailable
	if provisioned(i) {
		state = metal3v1alpha1.StateProvisioned
	}
	t0 := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	creds := metal3v1alpha1.CredentialsStatus{Reference: &corev1.SecretReference{Namespace: namespace, Name: name + "-bmc-secret"}, Version: fmt.Sprint(100000 + i)}
	history := metal3v1alpha1.OperationHistory{
		Register: metal3v1alpha1.OperationMetric{Start: at(0), End: at(15 * time.Second)},
		Inspect:  metal3v1alpha1.OperationMetric{Start: at(15 * time.Second), End: at(6 * time.Minute)},
	}
	if provisioned(i) {
		history.Provision = metal3v1alpha1.OperationMetric{Start: at(20 * time.Minute), End: at(31 * time.Minute)}
	}
	nics := make([]metal3v1alpha1.NIC, 4)
	for n := range nics {
		nics[n] = metal3v1alpha1.NIC{Name: fmt.Sprintf("eno%d", n+1), Model: "0x8086 0x1593", MAC: mac(i, n), SpeedGbps: 25, PXE: n == 0}
	}
	nics[0].IP = ip
	disks := make([]metal3v1alpha1.Storage, 3)
	for d := range disks {
		disks[d] = metal3v1alpha1.Storage{
			Name:           fmt.Sprintf("/dev/sd%c", 'a'+d),
			AlternateNames: []string{fmt.Sprintf("/dev/sd%c", 'a'+d), fmt.Sprintf("/dev/disk/by-path/pci-0000:18:00.0-scsi-0:2:%d:0", d)},
			Type:           metal3v1alpha1.SSD,
			SizeBytes:      960 * metal3v1alpha1.GigaByte,
			Vendor:         "ATA",
			Model:          "MZ7KH960HAJR0D3",
			SerialNumber:   fmt.Sprintf("S47NNA0R%05d%c", i, 'A'+d),
			WWN:            fmt.Sprintf("0x5002538e%08x", i<<2|d),
			HCTL:           fmt.Sprintf("0:2:%d:0", d),
		}
	}
	st := metal3v1alpha1.BareMetalHostStatus{
		OperationalStatus: metal3v1alpha1.OperationalStatusOK,
		LastUpdated:       ptrTime(at(45 * time.Minute)),
		HardwareDetails: &metal3v1alpha1.HardwareDetails{
			SystemVendor: metal3v1alpha1.HardwareSystemVendor{Manufacturer: "Dell Inc.", ProductName: "PowerEdge R650 (SKU=0A6F;ModelName=PowerEdge R650)", SerialNumber: fmt.Sprintf("J%06d", i)},
			Firmware:     metal3v1alpha1.Firmware{BIOS: metal3v1alpha1.BIOS{Date: "04/12/2024", Vendor: "Dell Inc.", Version: "1.13.2"}},
			RAMMebibytes: 262144,
			NIC:          nics,
			Storage:      disks,
			CPU: metal3v1alpha1.CPU{
				Arch: "x86_64", Model: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", ClockMegahertz: 2000, Count: 128,
				Flags: []string{"aes", "avx", "avx2", "avx512f", "fma", "lm", "nx", "pae", "sse4_2", "vmx"},
			},
			Hostname: name,
		},
		Provisioning: metal3v1alpha1.ProvisionStatus{
			State:           state,
			ID:              fmt.Sprintf("6f1c%04x-%04x-4d2a-9b1e-%012x", i>>16, i&0xffff, i),
			Image:           image,
			BootMode:        metal3v1alpha1.UEFI,
			RootDeviceHints: h.Spec.RootDeviceHints.DeepCopy(),
		},
		GoodCredentials:  creds,
		TriedCredentials: creds,
		PoweredOn:        provisioned(i),
		OperationHistory: history,
	}
	return h, st
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

// startAPI starts an API server (etcd and kube-apiserver, nothing else)
// with the BareMetalHost CRD.
func startAPI(b testing.TB) *testenv.Env {
	b.Helper()
	env, err := testenv.NewAPI(testenv.Options{
		CRDDirs:     []string{"config/metal3/crd/bases/metal3.io_baremetalhosts.yaml"},
		AddToScheme: []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme},
	})
	if err != nil {
		if testenv.MainSkip(err) {
			b.Skip(err)
		}
		b.Fatal(err)
	}
	return env
}

// fastClient is the bench's own client, so that creating the hosts is not
// held back by client-go's 5 requests/s.
func fastClient(b testing.TB, env *testenv.Env) client.Client {
	b.Helper()
	fast := rest.CopyConfig(env.Config)
	fast.QPS, fast.Burst = 2000, 4000
	c, err := client.New(fast, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// createHosts creates the namespace and n hosts, createWorkers at once:
// each host created, then its status written through the status
// subresource. It logs its progress every tenth.
func createHosts(ctx context.Context, b testing.TB, c client.Client, n int) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return err
	}
	start := time.Now()
	step := max(1, n/10)
	var done atomic.Int64
	return parallel(n, createWorkers, func(i int) error {
		h, st := bareMetalHost(i)
		if err := c.Create(ctx, h); err != nil {
			return fmt.Errorf("creating BareMetalHost %s/%s: %w", namespace, h.Name, err)
		}
		h.Status = st
		if err := c.Status().Update(ctx, h); err != nil {
			return fmt.Errorf("writing the status of BareMetalHost %s/%s: %w", namespace, h.Name, err)
		}
		if d := done.Add(1); d%int64(step) == 0 || d == int64(n) {
			b.Logf("created %s of %s BareMetalHosts with their status (%s)", harness.Count(int(d)), harness.Count(n), harness.Seconds(time.Since(start).Seconds()))
		}
		return nil
	})
}

// parallel runs f(0..n-1), workers at once, and joins the errors; it
// stops handing out work after the first.
func parallel(n, workers int, f func(i int) error) error {
	next := make(chan int)
	var mu sync.Mutex
	var errs []error
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					failed.Store(true)
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := 0; i < n && !failed.Load(); i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// writeSite writes the smallest site the dashboard serves: an airship
// config, metadata.yaml, and a phase bundle with one KubernetesApply phase
// on cluster c1 (a ConfigMap), a ClusterMap of c1 alone and a PhasePlan.
// It returns the config's path.
func writeSite(tb testing.TB, dir string) string {
	tb.Helper()
	repo := filepath.Join(dir, "site")
	files := map[string]string{
		"airship-config.yaml": `apiVersion: airshipit.org/v1alpha1
kind: Config
currentContext: bench
contexts:
  bench:
    manifest: ` + siteName + `
manifests:
  ` + siteName + `:
    phaseRepositoryName: site
    repositories:
      site:
        url: site
    targetPath: ..
    metadataPath: metadata.yaml
`,
		"metadata.yaml":             "phase:\n  path: phases\n  docEntryPointPrefix: entries\n",
		"phases/kustomization.yaml": "resources: [phases.yaml, executors.yaml, map.yaml, plan.yaml]\n",
		"phases/phases.yaml": `apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: config, clusterName: c1}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: KubernetesApply, name: apply}
  documentEntryPoint: config
`,
		"phases/executors.yaml":             "apiVersion: airshipit.org/v1alpha1\nkind: KubernetesApply\nmetadata: {name: apply}\nconfig: {waitOptions: {timeout: 20}}\n",
		"phases/map.yaml":                   "apiVersion: airshipit.org/v1alpha1\nkind: ClusterMap\nmetadata: {name: map}\nmap:\n  c1: {}\n",
		"phases/plan.yaml":                  "apiVersion: airshipit.org/v1alpha1\nkind: PhasePlan\nmetadata: {name: deploy}\nphases: [{name: config}]\n",
		"entries/config/kustomization.yaml": "resources: [cm.yaml]\n",
		"entries/config/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: site, namespace: " + namespace + "}\ndata: {site: " + siteName + "}\n",
	}
	for name, content := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return filepath.Join(repo, "airship-config.yaml")
}
