package baremetalhost

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/airshipit/airship-go/internal/hostops/hostopstest"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/direct"
)

// The handlers' tests run one step of one host against a fake BMC and a
// fake API client, with a clock the test sets.

const (
	unitAddress = "redfish-virtualmedia+http://bmc.test/redfish/v1/Systems/1"
	unitBMC     = "http://bmc.test/redfish/v1/Systems/1"
)

var (
	earlier = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	now     = earlier.Add(time.Hour)
)

// unitHost is a registered host in state, with a fake BMC in power whose
// methods named in fail fail.
func unitHost(t *testing.T, state metal3v1alpha1.ProvisioningState, power provisioner.PowerState, fail map[string]error, mutate func(*metal3v1alpha1.BareMetalHost)) (*hostScope, *hostopstest.Factory) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	h := hostopstest.BareMetalHost("metal3", "node-1", unitAddress, nil)
	h.UID = "uid-1"
	sec := hostopstest.Secret("metal3", hostopstest.CredentialsName("node-1"), "admin", "pw")
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sec).Build()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(sec), sec); err != nil {
		t.Fatal(err)
	}
	h.UpdateGoodCredentials(*sec)
	h.Status.Provisioning.State = state
	h.Status.OperationalStatus = metal3v1alpha1.OperationalStatusOK
	if mutate != nil {
		mutate(h)
	}
	f := hostopstest.NewFactory()
	f.Add(unitBMC, &hostopstest.Host{Username: "admin", Password: "pw", Power: power, Fail: fail})
	r := &BareMetalHostReconciler{Client: c, Factory: direct.New(f), Clock: clocktesting.NewFakePassiveClock(now), PowerPollInterval: time.Minute, MaxBackoff: time.Minute}
	return &hostScope{r: r, host: h, ctx: context.Background()}, f
}

func reasons(events []hostEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.reason)
	}
	return out
}

// calls returns the operations the fake BMC was asked for.
func calls(f *hostopstest.Factory) []string {
	_, _, c, _ := f.State(unitBMC)
	return c
}

// TestDeprovisionStart: every way into deprovisioning stamps a new start
// of the deprovision metric (and clears its end), so an earlier
// deprovisioning's start is never paired with a new end; a retry within
// deprovisioning keeps the start.
func TestDeprovisionStart(t *testing.T) {
	image := &metal3v1alpha1.Image{URL: "http://images.test/a.img"}
	old := func(h *metal3v1alpha1.BareMetalHost) {
		h.Status.OperationHistory.Deprovision = metal3v1alpha1.OperationMetric{Start: metav1.NewTime(earlier.Add(-time.Minute)), End: metav1.NewTime(earlier)}
		h.Status.Provisioning.Image = *image
	}
	tests := []struct {
		name      string
		state     metal3v1alpha1.ProvisioningState
		deleting  bool
		mutate    func(*metal3v1alpha1.BareMetalHost)
		fail      map[string]error
		wantState metal3v1alpha1.ProvisioningState
		wantStart time.Time
		wantEnd   time.Time
	}{
		{
			name: "image removed while provisioning", state: metal3v1alpha1.StateProvisioning,
			mutate:    func(h *metal3v1alpha1.BareMetalHost) { old(h); h.Status.Provisioning.Image = metal3v1alpha1.Image{} },
			wantState: metal3v1alpha1.StateDeprovisioning, wantStart: now,
		},
		{
			name: "image removed while provisioned", state: metal3v1alpha1.StateProvisioned, mutate: old,
			wantState: metal3v1alpha1.StateDeprovisioning, wantStart: now,
		},
		{
			name: "deleted while provisioned", state: metal3v1alpha1.StateProvisioned, deleting: true,
			mutate:    func(h *metal3v1alpha1.BareMetalHost) { old(h); h.Spec.Image = image.DeepCopy() },
			wantState: metal3v1alpha1.StateDeprovisioning, wantStart: now,
		},
		{
			name: "deleted while provisioning", state: metal3v1alpha1.StateProvisioning, deleting: true,
			mutate:    func(h *metal3v1alpha1.BareMetalHost) { old(h); h.Spec.Image = image.DeepCopy() },
			wantState: metal3v1alpha1.StateDeprovisioning, wantStart: now,
		},
		{
			name: "a retried deprovisioning keeps its start", state: metal3v1alpha1.StateDeprovisioning,
			mutate: func(h *metal3v1alpha1.BareMetalHost) {
				h.Status.OperationHistory.Deprovision = metal3v1alpha1.OperationMetric{Start: metav1.NewTime(earlier)}
			},
			fail:      map[string]error{"EjectMedia": provisioner.ErrUnreachable},
			wantState: metal3v1alpha1.StateDeprovisioning, wantStart: earlier,
		},
		{
			name: "a finished deprovisioning keeps its start", state: metal3v1alpha1.StateDeprovisioning,
			mutate: func(h *metal3v1alpha1.BareMetalHost) {
				h.Status.OperationHistory.Deprovision = metal3v1alpha1.OperationMetric{Start: metav1.NewTime(earlier)}
			},
			wantState: metal3v1alpha1.StateAvailable, wantStart: earlier, wantEnd: now,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := unitHost(t, tt.state, provisioner.PowerOn, tt.fail, tt.mutate)
			_ = s.run(tt.deleting) // the outcome is read from the status below
			st := s.host.Status
			m := st.OperationHistory.Deprovision
			if st.Provisioning.State != tt.wantState || !m.Start.Time.Equal(tt.wantStart) || !m.End.Time.Equal(tt.wantEnd) {
				t.Errorf("state %q deprovision %s to %s; want %q %s to %s", st.Provisioning.State, m.Start.Time, m.End.Time, tt.wantState, tt.wantStart, tt.wantEnd)
			}
		})
	}
}

// TestManagePowerReboot: the unsuffixed reboot annotation reboots a host
// that is to be online and is removed; on a host whose spec.online is
// false it is removed without touching the power, as upstream leaves an
// offline host off.
func TestManagePowerReboot(t *testing.T) {
	tests := []struct {
		name       string
		online     bool
		power      provisioner.PowerState
		annotation string
		wantCalls  []string
		wantPower  provisioner.PowerState
		wantClear  bool
		wantEvents []string
	}{
		{name: "online, on: rebooted", online: true, power: provisioner.PowerOn, annotation: `{"mode":"hard"}`,
			wantCalls: []string{"Reboot"}, wantPower: provisioner.PowerOn, wantClear: true, wantEvents: []string{"Rebooted"}},
		{name: "online, off: powered on by the reboot", online: true, power: provisioner.PowerOff,
			wantCalls: []string{"Reboot"}, wantPower: provisioner.PowerOn, wantClear: true, wantEvents: []string{"Rebooted"}},
		{name: "offline, off: left off", online: false, power: provisioner.PowerOff,
			wantCalls: nil, wantPower: provisioner.PowerOff, wantClear: true, wantEvents: []string{"RebootSkipped"}},
		{name: "offline, on: powered off as spec.online asks, not rebooted", online: false, power: provisioner.PowerOn, annotation: `{"force":true}`,
			wantCalls: []string{"PowerOff"}, wantPower: provisioner.PowerOff, wantClear: true, wantEvents: []string{"RebootSkipped", "PowerOff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f := unitHost(t, metal3v1alpha1.StateProvisioned, tt.power, nil, func(h *metal3v1alpha1.BareMetalHost) {
				h.Spec.Online = tt.online
				h.Spec.Image = &metal3v1alpha1.Image{URL: "http://images.test/a.img"}
				h.Status.Provisioning.Image = *h.Spec.Image
				h.Annotations = map[string]string{metal3v1alpha1.RebootAnnotationPrefix: tt.annotation}
			})
			_ = s.run(false) // the outcome is read from the BMC calls below
			power, _, _, _ := f.State(unitBMC)
			if got := calls(f); !slices.Equal(got, tt.wantCalls) || power != tt.wantPower {
				t.Errorf("BMC calls %v, power %s; want %v, %s", got, power, tt.wantCalls, tt.wantPower)
			}
			if slices.Contains(s.clearAnnotations, metal3v1alpha1.RebootAnnotationPrefix) != tt.wantClear {
				t.Errorf("annotations to remove %q, want the reboot one removed %v", s.clearAnnotations, tt.wantClear)
			}
			if got := reasons(s.events); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("events %v, want %v", got, tt.wantEvents)
			}
			if s.host.Status.PoweredOn != (tt.wantPower == provisioner.PowerOn) {
				t.Errorf("status.poweredOn %v", s.host.Status.PoweredOn)
			}
		})
	}
}

// TestCustomDeployWithoutImage: a host with spec.customDeploy and no image
// is provisioned without media (there is no deploy ramdisk to run the
// method): nothing is booted, the host is powered on (spec.online is applied once provisioned),
// and status.provisioning.customDeploy records the method. Taking the
// custom deploy away deprovisions it.
func TestCustomDeployWithoutImage(t *testing.T) {
	custom := func(online bool) func(h *metal3v1alpha1.BareMetalHost) {
		return func(h *metal3v1alpha1.BareMetalHost) {
			h.Spec.Online = online
			h.Spec.CustomDeploy = &metal3v1alpha1.CustomDeploy{Method: "install_great_os"}
		}
	}
	tests := []struct {
		name      string
		state     metal3v1alpha1.ProvisioningState
		power     provisioner.PowerState
		mutate    func(*metal3v1alpha1.BareMetalHost)
		fail      map[string]error
		wantState metal3v1alpha1.ProvisioningState
		wantCalls []string
		wantError metal3v1alpha1.ErrorType
	}{
		{name: "available, online: provisioning starts", state: metal3v1alpha1.StateAvailable, power: provisioner.PowerOff, mutate: custom(true),
			wantState: metal3v1alpha1.StateProvisioning},
		{name: "provisioning, off: powered on, provisioned", state: metal3v1alpha1.StateProvisioning, power: provisioner.PowerOff, mutate: custom(true),
			wantState: metal3v1alpha1.StateProvisioned, wantCalls: []string{"PowerOn"}},
		{name: "provisioning, on: provisioned", state: metal3v1alpha1.StateProvisioning, power: provisioner.PowerOn, mutate: custom(true),
			wantState: metal3v1alpha1.StateProvisioned},
		{name: "provisioning, gone offline meanwhile: provisioned and on (the deploy powers on; spec.online is applied next)", state: metal3v1alpha1.StateProvisioning, power: provisioner.PowerOff, mutate: custom(false),
			wantState: metal3v1alpha1.StateProvisioned, wantCalls: []string{"PowerOn"}},
		{name: "provisioning, the BMC fails: a provisioning error", state: metal3v1alpha1.StateProvisioning, power: provisioner.PowerOff, mutate: custom(true),
			fail: map[string]error{"PowerOn": provisioner.ErrUnreachable}, wantState: metal3v1alpha1.StateProvisioning, wantCalls: []string{"PowerOn"}, wantError: metal3v1alpha1.ProvisioningError},
		{name: "provisioned: stays provisioned", state: metal3v1alpha1.StateProvisioned, power: provisioner.PowerOn,
			mutate: func(h *metal3v1alpha1.BareMetalHost) {
				custom(true)(h)
				h.Status.Provisioning.CustomDeploy = h.Spec.CustomDeploy.DeepCopy()
			},
			wantState: metal3v1alpha1.StateProvisioned},
		{name: "provisioned, custom deploy removed: deprovisioning", state: metal3v1alpha1.StateProvisioned, power: provisioner.PowerOn,
			mutate: func(h *metal3v1alpha1.BareMetalHost) {
				h.Status.Provisioning.CustomDeploy = &metal3v1alpha1.CustomDeploy{Method: "install_great_os"}
			},
			wantState: metal3v1alpha1.StateDeprovisioning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f := unitHost(t, tt.state, tt.power, tt.fail, tt.mutate)
			_ = s.run(false) // the outcome is read from the status below
			st := s.host.Status
			if st.Provisioning.State != tt.wantState || st.ErrorType != tt.wantError {
				t.Fatalf("state %q error %q %q; want %q error %q", st.Provisioning.State, st.ErrorType, st.ErrorMessage, tt.wantState, tt.wantError)
			}
			if got := calls(f); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("BMC calls %v, want %v", got, tt.wantCalls)
			}
			if tt.state == metal3v1alpha1.StateProvisioning && tt.wantState == metal3v1alpha1.StateProvisioned {
				p := st.Provisioning
				if p.CustomDeploy == nil || p.CustomDeploy.Method != "install_great_os" || p.Image.URL != "" || p.ID != "uid-1" {
					t.Errorf("status.provisioning %+v", p)
				}
				if !st.PoweredOn || st.OperationHistory.Provision.End.IsZero() {
					t.Errorf("poweredOn %v, provision %+v", st.PoweredOn, st.OperationHistory.Provision)
				}
				if got := reasons(s.events); !slices.Equal(got, []string{"ProvisioningComplete"}) {
					t.Errorf("events %v", got)
				}
			}
		})
	}
}

// TestBootMediaMetaData: the meta-data handed to the BMC is upstream's
// config-drive defaults with the Secret's keys winning; meta-data that is
// not a mapping is an error naming the Secret, not quoting its content.
func TestBootMediaMetaData(t *testing.T) {
	tests := []struct {
		name, data string
		want       map[string]string
		err        string
	}{
		{name: "no Secret: defaults", want: map[string]string{"uuid": "uid-1", "name": "node-1", "local-hostname": "node-1", "local_hostname": "node-1", "metal3-name": "node-1", "metal3-namespace": "metal3"}},
		{name: "the Secret wins", data: "name: machine-0\nrole: worker\n", want: map[string]string{"uuid": "uid-1", "name": "machine-0", "role": "worker", "local-hostname": "node-1"}},
		{name: "JSON", data: `{"local-hostname": "m-1"}`, want: map[string]string{"local-hostname": "m-1", "name": "node-1"}},
		{name: "not a mapping", data: "- secret-looking-item\n", err: "spec.metaData: Secret metal3/meta key metaData is not a JSON or YAML mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := unitHost(t, metal3v1alpha1.StateProvisioning, provisioner.PowerOff, nil, func(h *metal3v1alpha1.BareMetalHost) {
				h.Spec.Image = &metal3v1alpha1.Image{URL: "http://img"}
				if tt.data != "" {
					h.Spec.MetaData = &corev1.SecretReference{Name: "meta"}
				}
			})
			if tt.data != "" {
				sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "meta"}, Data: map[string][]byte{"metaData": []byte(tt.data)}}
				if err := s.r.Client.Create(context.Background(), sec); err != nil {
					t.Fatal(err)
				}
			}
			m, err := s.provisionData()
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || strings.Contains(err.Error(), "secret-looking-item") {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(m.MetaData, &got); err != nil {
				t.Fatalf("meta-data %s: %v", m.MetaData, err)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("meta-data[%s] = %v, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}

// TestPowerEventOncePerTransition: a power-on or power-off records its
// event once, whether the provisioner answers done at once (the direct
// one), or Dirty first (Ironic: the request accepted and under way) and
// the next pass already reads the new power state (no call then), or
// Dirty and then done. Not on each Dirty pass, not when the request is
// accepted, not for a request that failed, and not twice across a
// restarted controller (a new reconciler, nothing remembered).
func TestPowerEventOncePerTransition(t *testing.T) {
	dirty := provisioner.Result{Dirty: true}
	type pass struct {
		restart bool
		// power is what the provisioner reads at the start of the pass;
		// res its answer to a power request.
		power provisioner.PowerState
		res   provisioner.Result
	}
	on, off := provisioner.PowerOn, provisioner.PowerOff
	tests := []struct {
		name       string
		online     bool
		passes     []pass
		wantCalls  []string
		wantEvents []string
	}{
		{name: "done at once", online: true, passes: []pass{{power: off}, {power: on}},
			wantCalls: []string{"PowerOn"}, wantEvents: []string{"PowerOn"}},
		{name: "Dirty, then the power state reads on", online: true, passes: []pass{{power: off, res: dirty}, {power: off, res: dirty}, {power: on}, {power: on}},
			wantCalls: []string{"PowerOn", "PowerOn"}, wantEvents: []string{"PowerOn"}},
		{name: "Dirty, then done", online: true, passes: []pass{{power: off, res: dirty}, {power: off}, {power: on}},
			wantCalls: []string{"PowerOn", "PowerOn"}, wantEvents: []string{"PowerOn"}},
		{name: "power off: Dirty, then off", online: false, passes: []pass{{power: on, res: dirty}, {power: off}},
			wantCalls: []string{"PowerOff"}, wantEvents: []string{"PowerOff"}},
		{name: "Dirty, then failed: the failure's event, then the retry's PowerOn", online: true,
			passes:    []pass{{power: off, res: dirty}, {power: off, res: provisioner.Result{ErrorMessage: "power on failed"}}, {power: off, res: dirty}, {power: on}},
			wantCalls: []string{"PowerOn", "PowerOn", "PowerOn"}, wantEvents: []string{"PowerManagementError", "PowerOn"}},
		{name: "Dirty, restarted while still under way, then on", online: true, passes: []pass{{power: off, res: dirty}, {restart: true, power: off, res: dirty}, {power: on}},
			wantCalls: []string{"PowerOn", "PowerOn"}, wantEvents: []string{"PowerOn"}},
		{name: "on, off, on: one event each", online: true, passes: []pass{{power: off, res: dirty}, {power: on}, {power: off, res: dirty}, {power: on}},
			wantCalls: []string{"PowerOn", "PowerOn"}, wantEvents: []string{"PowerOn", "PowerOn"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f := lifecycleHost(t, metal3v1alpha1.StateAvailable, func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Online = tt.online })
			var events []string
			for i, p := range tt.passes {
				if p.restart {
					old := s.r
					s.r = &BareMetalHostReconciler{Client: old.Client, Factory: old.Factory, Clock: old.Clock, PowerPollInterval: old.PowerPollInterval, MaxBackoff: old.MaxBackoff}
				}
				f.power = p.power
				f.results["PowerOn"], f.results["PowerOff"] = p.res, p.res
				s = again(s)
				_ = s.run(false) // the outcome is read from the calls and events below
				if p.res.Dirty && s.wait <= 0 {
					t.Errorf("pass %d: a Dirty power request is not waited for", i+1)
				}
				events = append(events, reasons(s.events)...)
			}
			var powerCalls []string
			for _, c := range f.calls {
				if c == "PowerOn" || c == "PowerOff" {
					powerCalls = append(powerCalls, c)
				}
			}
			if !slices.Equal(powerCalls, tt.wantCalls) {
				t.Errorf("power calls %v, want %v", powerCalls, tt.wantCalls)
			}
			if !slices.Equal(events, tt.wantEvents) {
				t.Errorf("events %v, want %v", events, tt.wantEvents)
			}
		})
	}
}
