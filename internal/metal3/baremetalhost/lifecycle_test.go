package baremetalhost

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airshipit/airship-go/internal/hostops/hostopstest"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/direct"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// fakeLifecycle is an in-memory provisioner.Provisioner (and its Factory)
// answering each method with the Result and error the test sets.
type fakeLifecycle struct {
	results map[string]provisioner.Result
	errs    map[string]error
	power   provisioner.PowerState
	id      string

	opens    []provisioner.Host
	calls    []string
	register []provisioner.RegisterData
	inspect  []provisioner.InspectData
}

func newFakeLifecycle() *fakeLifecycle {
	return &fakeLifecycle{results: map[string]provisioner.Result{}, errs: map[string]error{}, power: provisioner.PowerOff, id: "engine-id-1"}
}

func (f *fakeLifecycle) Open(_ context.Context, h provisioner.Host) (provisioner.Provisioner, error) {
	f.opens = append(f.opens, h)
	return f, nil
}

// answer records a call and returns what the test set for it.
func (f *fakeLifecycle) answer(method string) (provisioner.Result, error) {
	f.calls = append(f.calls, method)
	return f.results[method], f.errs[method]
}

func (f *fakeLifecycle) Register(_ context.Context, d provisioner.RegisterData) (provisioner.Result, string, error) {
	f.register = append(f.register, d)
	res, err := f.answer("Register")
	return res, f.id, err
}

func (f *fakeLifecycle) Inspect(_ context.Context, d provisioner.InspectData) (provisioner.Result, *metal3v1alpha1.HardwareDetails, error) {
	f.inspect = append(f.inspect, d)
	res, err := f.answer("Inspect")
	if res.Dirty || err != nil {
		return res, nil, err
	}
	return res, &metal3v1alpha1.HardwareDetails{Hostname: "inspected"}, err
}

func (f *fakeLifecycle) Prepare(context.Context, provisioner.PrepareData) (provisioner.Result, error) {
	return f.answer("Prepare")
}

func (f *fakeLifecycle) Provision(context.Context, provisioner.ProvisionData) (provisioner.Result, error) {
	return f.answer("Provision")
}

func (f *fakeLifecycle) Adopt(context.Context, provisioner.AdoptData) (provisioner.Result, error) {
	return f.answer("Adopt")
}

func (f *fakeLifecycle) Deprovision(context.Context, provisioner.DeprovisionData) (provisioner.Result, error) {
	return f.answer("Deprovision")
}

func (f *fakeLifecycle) Delete(context.Context) (provisioner.Result, error) {
	return f.answer("Delete")
}
func (f *fakeLifecycle) Detach(context.Context) (provisioner.Result, error) {
	return f.answer("Detach")
}

func (f *fakeLifecycle) PowerState(context.Context) (provisioner.PowerState, error) {
	return f.power, nil
}

func (f *fakeLifecycle) setPower(method string, to provisioner.PowerState) (provisioner.Result, error) {
	res, err := f.answer(method)
	if err == nil && !res.Dirty && res.ErrorMessage == "" {
		f.power = to
	}
	return res, err
}

func (f *fakeLifecycle) PowerOn(context.Context) (provisioner.Result, error) {
	return f.setPower("PowerOn", provisioner.PowerOn)
}

func (f *fakeLifecycle) PowerOff(context.Context, bool) (provisioner.Result, error) {
	return f.setPower("PowerOff", provisioner.PowerOff)
}

func (f *fakeLifecycle) Reboot(context.Context, bool) (provisioner.Result, error) {
	return f.setPower("Reboot", provisioner.PowerOn)
}

// lifecycleHost is unitHost driven over a fakeLifecycle.
func lifecycleHost(t *testing.T, state metal3v1alpha1.ProvisioningState, mutate func(*metal3v1alpha1.BareMetalHost)) (*hostScope, *fakeLifecycle) {
	t.Helper()
	s, _ := unitHost(t, state, provisioner.PowerOff, nil, mutate)
	f := newFakeLifecycle()
	s.r.Factory = f
	return s, f
}

// again is a new pass over the same host and reconciler.
func again(s *hostScope) *hostScope {
	return &hostScope{r: s.r, host: s.host, ctx: s.ctx}
}

// TestStepResults: per state, what its lifecycle step's answer does. A
// Dirty result keeps the host in its state, is no error and looks again
// after the result's RequeueAfter (ProvisionPollInterval when 0); an
// ErrorMessage or an error (the engine unavailable) is the state's error
// type, retried after the backoff; a clean result moves the host on.
func TestStepResults(t *testing.T) {
	withImage := func(h *metal3v1alpha1.BareMetalHost) {
		h.Spec.Online = true
		h.Spec.Image = &metal3v1alpha1.Image{URL: "http://images.test/a.img"}
	}
	provisioned := func(h *metal3v1alpha1.BareMetalHost) { withImage(h); h.Status.Provisioning.Image = *h.Spec.Image }
	steps := []struct {
		name     string
		state    metal3v1alpha1.ProvisioningState
		method   string
		deleting bool
		mutate   func(*metal3v1alpha1.BareMetalHost)
		errType  metal3v1alpha1.ErrorType
		next     metal3v1alpha1.ProvisioningState
	}{
		{name: "registering", state: metal3v1alpha1.StateRegistering, method: "Register", errType: metal3v1alpha1.RegistrationError, next: metal3v1alpha1.StateInspecting},
		{name: "provisioned, registering again", state: metal3v1alpha1.StateProvisioned, method: "Register", mutate: provisioned, errType: metal3v1alpha1.ProvisionedRegistrationError, next: metal3v1alpha1.StateProvisioned},
		{name: "inspecting", state: metal3v1alpha1.StateInspecting, method: "Inspect", errType: metal3v1alpha1.InspectionError, next: metal3v1alpha1.StatePreparing},
		{name: "preparing", state: metal3v1alpha1.StatePreparing, method: "Prepare", errType: metal3v1alpha1.PreparationError, next: metal3v1alpha1.StateAvailable},
		{name: "provisioning", state: metal3v1alpha1.StateProvisioning, method: "Provision", mutate: withImage, errType: metal3v1alpha1.ProvisioningError, next: metal3v1alpha1.StateProvisioned},
		{name: "provisioned, adopting", state: metal3v1alpha1.StateProvisioned, method: "Adopt", mutate: provisioned, errType: metal3v1alpha1.ProvisionedRegistrationError, next: metal3v1alpha1.StateProvisioned},
		{name: "externally provisioned, adopting", state: metal3v1alpha1.StateExternallyProvisioned, method: "Adopt",
			mutate: func(h *metal3v1alpha1.BareMetalHost) { h.Spec.ExternallyProvisioned = true }, errType: metal3v1alpha1.ProvisionedRegistrationError, next: metal3v1alpha1.StateExternallyProvisioned},
		{name: "deprovisioning", state: metal3v1alpha1.StateDeprovisioning, method: "Deprovision", errType: metal3v1alpha1.ProvisioningError, next: metal3v1alpha1.StateAvailable},
		{name: "available, powering on", state: metal3v1alpha1.StateAvailable, method: "PowerOn",
			mutate: func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Online = true }, errType: metal3v1alpha1.PowerManagementError, next: metal3v1alpha1.StateAvailable},
		{name: "available, rebooting", state: metal3v1alpha1.StateAvailable, method: "Reboot",
			mutate: func(h *metal3v1alpha1.BareMetalHost) {
				h.Spec.Online = true
				h.Annotations = map[string]string{metal3v1alpha1.RebootAnnotationPrefix: ""}
			}, errType: metal3v1alpha1.PowerManagementError, next: metal3v1alpha1.StateAvailable},
		{name: "deleted, powering off before delete", state: metal3v1alpha1.StatePoweringOffBeforeDelete, method: "PowerOff", deleting: true,
			errType: metal3v1alpha1.PowerManagementError, next: metal3v1alpha1.StateDeleting},
		{name: "deleted, deleting", state: metal3v1alpha1.StateDeleting, method: "Delete", deleting: true,
			errType: metal3v1alpha1.RegistrationError, next: metal3v1alpha1.StateDeleting},
	}
	answers := []struct {
		name      string
		res       provisioner.Result
		err       error
		wantAfter time.Duration
		wantKind  operatorkit.OutcomeKind
		failed    bool
		wantMsg   string
	}{
		{name: "dirty", res: provisioner.Result{Dirty: true, RequeueAfter: 3 * time.Second}, wantAfter: 3 * time.Second, wantKind: operatorkit.Succeeded},
		{name: "dirty, the controller's wait", res: provisioner.Result{Dirty: true}, wantAfter: DefaultProvisionPollInterval, wantKind: operatorkit.Succeeded},
		{name: "error message", res: provisioner.Result{ErrorMessage: "deploy failed: bad checksum"}, wantAfter: baseBackoff, wantKind: operatorkit.Failed, failed: true, wantMsg: "deploy failed: bad checksum"},
		{name: "engine unavailable", err: fmt.Errorf("ironic at http://127.0.0.1:6385: %w", provisioner.ErrEngineUnavailable), wantAfter: baseBackoff, wantKind: operatorkit.Failed, failed: true, wantMsg: "ironic at http://127.0.0.1:6385: the provisioning engine is unavailable"},
		{name: "done", wantKind: operatorkit.Succeeded},
	}
	for _, st := range steps {
		for _, a := range answers {
			t.Run(st.name+"/"+a.name, func(t *testing.T) {
				s, f := lifecycleHost(t, st.state, st.mutate)
				if st.method == "PowerOff" {
					f.power = provisioner.PowerOn
				}
				f.results[st.method], f.errs[st.method] = a.res, a.err
				o := operatorkit.OutcomeOf(s.run(st.deleting), "")
				h := s.host.Status
				if !slices.Contains(f.calls, st.method) || (st.method == "Register" && len(f.calls) != 1 && (a.res.Dirty || a.failed)) {
					t.Fatalf("calls %v, want %s (and nothing after a Register that is not done)", f.calls, st.method)
				}
				if o.Kind != a.wantKind {
					t.Errorf("outcome %s (%v), want %s", o.Kind, o.Err, a.wantKind)
				}
				wantState, wantErr := st.state, metal3v1alpha1.ErrorType("")
				if a.failed {
					wantErr = st.errType
				} else if !a.res.Dirty {
					wantState = st.next
				}
				if h.Provisioning.State != wantState || h.ErrorType != wantErr || !strings.Contains(h.ErrorMessage, a.wantMsg) {
					t.Errorf("state %q error %q %q; want %q error %q holding %q", h.Provisioning.State, h.ErrorType, h.ErrorMessage, wantState, wantErr, a.wantMsg)
				}
				if a.failed && (h.ErrorCount != 1 || h.OperationalStatus != metal3v1alpha1.OperationalStatusError) {
					t.Errorf("errorCount %d operationalStatus %q after a failure", h.ErrorCount, h.OperationalStatus)
				}
				if a.wantAfter != 0 {
					if got := s.requeue(o).RequeueAfter; got != a.wantAfter {
						t.Errorf("requeue after %s, want %s", got, a.wantAfter)
					}
				}
				if st.deleting && s.removeFinalizer != (!a.failed && !a.res.Dirty) {
					t.Errorf("finalizer removed %v", s.removeFinalizer)
				}
			})
		}
	}
}

// TestRegisterEveryPass: every pass of a managed host registers it, telling
// the provisioner of the host, whether its credentials changed and its
// state; the provisioner's id is status.provisioning.ID. Unchanged
// credentials are not "changed"; a new Secret version is.
func TestRegisterEveryPass(t *testing.T) {
	s, f := lifecycleHost(t, metal3v1alpha1.StateAvailable, func(h *metal3v1alpha1.BareMetalHost) {
		h.Spec.BootMACAddress = "52:54:00:00:00:01"
		h.Status.Provisioning.ID = "old-id"
	})
	for range 2 {
		if err := again(s).run(false); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.register) != 2 || f.register[0].CredentialsChanged || f.register[0].State != metal3v1alpha1.StateAvailable {
		t.Fatalf("registrations %+v, want two with unchanged credentials in available", f.register)
	}
	o := f.opens[0]
	if o.Namespace != "metal3" || o.Name != "node-1" || o.UID != "uid-1" || o.ID != "old-id" || o.BootMACAddress != "52:54:00:00:00:01" ||
		o.BMC.Credentials.Username != "admin" || o.BMC.Access.SystemPath != "/redfish/v1/Systems/1" || o.BootMode != metal3v1alpha1.DefaultBootMode {
		t.Errorf("opened with %+v", o)
	}
	if s.host.Status.Provisioning.ID != "engine-id-1" {
		t.Errorf("status.provisioning.ID %q, want the provisioner's id", s.host.Status.Provisioning.ID)
	}
	s.host.Status.GoodCredentials.Version = "older"
	if err := again(s).run(false); err != nil {
		t.Fatal(err)
	}
	if !f.register[2].CredentialsChanged || s.host.Status.GoodCredentials.Version == "older" {
		t.Errorf("a new Secret version: changed %v, goodCredentials %+v", f.register[2].CredentialsChanged, s.host.Status.GoodCredentials)
	}
}

// TestInspectAnnotation: "disabled" skips inspection; any other value on
// an available or preparing host starts an inspection that refreshes the
// inventory and removes the annotation when done.
func TestInspectAnnotation(t *testing.T) {
	tests := []struct {
		name      string
		state     metal3v1alpha1.ProvisioningState
		value     string
		wantState metal3v1alpha1.ProvisioningState
	}{
		{name: "registering, disabled: straight to preparing", state: metal3v1alpha1.StateRegistering, value: "disabled", wantState: metal3v1alpha1.StatePreparing},
		{name: "available, requested: inspecting", state: metal3v1alpha1.StateAvailable, value: "", wantState: metal3v1alpha1.StateInspecting},
		{name: "preparing, requested: inspecting", state: metal3v1alpha1.StatePreparing, value: "now", wantState: metal3v1alpha1.StateInspecting},
		{name: "available, disabled: stays", state: metal3v1alpha1.StateAvailable, value: "disabled", wantState: metal3v1alpha1.StateAvailable},
		{name: "inspecting, requested: refreshed, annotation removed", state: metal3v1alpha1.StateInspecting, value: "", wantState: metal3v1alpha1.StatePreparing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f := lifecycleHost(t, tt.state, func(h *metal3v1alpha1.BareMetalHost) {
				h.Annotations = map[string]string{metal3v1alpha1.InspectAnnotationPrefix: tt.value}
				if tt.state != metal3v1alpha1.StateRegistering {
					h.Status.HardwareDetails = &metal3v1alpha1.HardwareDetails{Hostname: "known"}
				}
			})
			if err := s.run(false); err != nil {
				t.Fatal(err)
			}
			if got := s.host.Status.Provisioning.State; got != tt.wantState {
				t.Errorf("state %q, want %q", got, tt.wantState)
			}
			if tt.state != metal3v1alpha1.StateInspecting {
				if slices.Contains(f.calls, "Inspect") || len(s.clearAnnotations) != 0 {
					t.Errorf("calls %v, annotations removed %v", f.calls, s.clearAnnotations)
				}
				return
			}
			if len(f.inspect) != 1 || !f.inspect[0].Refresh || s.host.Status.HardwareDetails.Hostname != "inspected" {
				t.Errorf("inspections %+v, hardware %+v", f.inspect, s.host.Status.HardwareDetails)
			}
			if !slices.Equal(s.clearAnnotations, []string{metal3v1alpha1.InspectAnnotationPrefix}) {
				t.Errorf("annotations removed %v", s.clearAnnotations)
			}
		})
	}
}

// TestDetachOnce: the detached annotation detaches a registered host once
// (Dirty waits), then nothing is asked of the provisioner, not even on
// delete; removing the annotation registers the host again.
func TestDetachOnce(t *testing.T) {
	s, f := lifecycleHost(t, metal3v1alpha1.StateProvisioned, func(h *metal3v1alpha1.BareMetalHost) {
		h.Spec.Image = &metal3v1alpha1.Image{URL: "http://images.test/a.img"}
		h.Status.Provisioning.Image = *h.Spec.Image
		h.Annotations = map[string]string{metal3v1alpha1.DetachedAnnotation: ""}
	})
	f.results["Detach"] = provisioner.Result{Dirty: true}
	if err := s.run(false); err != nil || s.host.Status.OperationalStatus == metal3v1alpha1.OperationalStatusDetached || s.wait == 0 {
		t.Fatalf("detach under way: err %v, status %q, wait %s", err, s.host.Status.OperationalStatus, s.wait)
	}
	f.results["Detach"] = provisioner.Result{}
	if err := again(s).run(false); err != nil || s.host.Status.OperationalStatus != metal3v1alpha1.OperationalStatusDetached {
		t.Fatalf("detached: err %v, status %q", err, s.host.Status.OperationalStatus)
	}
	for _, deleting := range []bool{false, true} {
		if err := again(s).run(deleting); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(f.calls, []string{"Detach", "Detach"}) {
		t.Errorf("calls %v, want only the two Detach calls", f.calls)
	}
	delete(s.host.Annotations, metal3v1alpha1.DetachedAnnotation)
	if err := again(s).run(false); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.calls[2:], []string{"Register", "Adopt"}) || s.host.Status.OperationalStatus != metal3v1alpha1.OperationalStatusOK {
		t.Errorf("after the annotation went: calls %v, status %q", f.calls[2:], s.host.Status.OperationalStatus)
	}
}

// TestDeleteProvisioned: a deleted provisioned host is deprovisioned,
// powered off and deleted from the provisioner before it is let go.
func TestDeleteProvisioned(t *testing.T) {
	s, f := lifecycleHost(t, metal3v1alpha1.StateProvisioned, func(h *metal3v1alpha1.BareMetalHost) {
		h.Spec.Image = &metal3v1alpha1.Image{URL: "http://images.test/a.img"}
		h.Status.Provisioning.Image = *h.Spec.Image
		h.DeletionTimestamp = &metav1.Time{Time: now}
	})
	f.power = provisioner.PowerOn
	for i := 0; i < 5 && !s.removeFinalizer; i++ {
		s = again(s)
		if err := s.run(true); err != nil {
			t.Fatal(err)
		}
	}
	var steps []string
	for _, c := range f.calls {
		if c != "Register" {
			steps = append(steps, c)
		}
	}
	if !s.removeFinalizer || !slices.Equal(steps, []string{"Deprovision", "PowerOff", "Delete"}) {
		t.Errorf("finalizer removed %v, steps %v", s.removeFinalizer, steps)
	}
}

// TestPowerOnceSlowBMC: a BMC that goes on reporting the old power state
// for a while after a power-on gets one request: the controller waits
// (Dirty, the direct provisioner's poll interval) instead of sending it
// again on each pass.
func TestPowerOnceSlowBMC(t *testing.T) {
	s, f := unitHost(t, metal3v1alpha1.StateAvailable, provisioner.PowerOff, nil, func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Online = true })
	f.Add(unitBMC, &hostopstest.Host{Username: "admin", Password: "pw", Power: provisioner.PowerOff, Lag: 3})
	var afters []time.Duration
	for i := 0; i < 6 && !s.host.Status.PoweredOn; i++ {
		s = again(s)
		o := operatorkit.OutcomeOf(s.run(false), "")
		if o.Kind != operatorkit.Succeeded {
			t.Fatalf("pass %d: outcome %s %v", i+1, o.Kind, o.Err)
		}
		afters = append(afters, s.requeue(o).RequeueAfter)
	}
	if !s.host.Status.PoweredOn || !s.poll {
		t.Fatalf("never seen on: poweredOn %v", s.host.Status.PoweredOn)
	}
	if got := calls(f); !slices.Equal(got, []string{"PowerOn"}) {
		t.Errorf("BMC operations %v, want one PowerOn", got)
	}
	if afters[0] != direct.DefaultPollInterval || afters[len(afters)-1] != time.Minute {
		t.Errorf("requeued after %v: the request's poll interval while in flight, then the power poll", afters)
	}
}

// TestDeleteGivesUp: a deleted host whose registration, or power-off
// before delete, failed more than maxFailuresBeforeDelete times goes on to
// deleting without another try; fewer failures are retried.
func TestDeleteGivesUp(t *testing.T) {
	tests := []struct {
		name      string
		state     metal3v1alpha1.ProvisioningState
		errType   metal3v1alpha1.ErrorType
		count     int
		wantSteps []string
	}{
		{name: "deprovisioning, registration failing", state: metal3v1alpha1.StateDeprovisioning, errType: metal3v1alpha1.ProvisionedRegistrationError, count: 4, wantSteps: []string{"Delete"}},
		{name: "deprovisioning, registration failed thrice: retried", state: metal3v1alpha1.StateDeprovisioning, errType: metal3v1alpha1.RegistrationError, count: 3, wantSteps: []string{"Register", "Deprovision"}},
		{name: "powering off, failing", state: metal3v1alpha1.StatePoweringOffBeforeDelete, errType: metal3v1alpha1.PowerManagementError, count: 4, wantSteps: []string{"Delete"}},
		{name: "deprovisioning, deprovision failing: retried", state: metal3v1alpha1.StateDeprovisioning, errType: metal3v1alpha1.ProvisioningError, count: 9, wantSteps: []string{"Register", "Deprovision"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f := lifecycleHost(t, tt.state, func(h *metal3v1alpha1.BareMetalHost) {
				h.DeletionTimestamp = &metav1.Time{Time: now}
				h.Status.ErrorType, h.Status.ErrorCount = tt.errType, tt.count
			})
			f.power = provisioner.PowerOn
			if err := s.run(true); err != nil {
				t.Fatal(err)
			}
			if len(f.calls) < len(tt.wantSteps) || !slices.Equal(f.calls[:len(tt.wantSteps)], tt.wantSteps) {
				t.Errorf("calls %v, want %v first", f.calls, tt.wantSteps)
			}
			if gaveUp := tt.wantSteps[0] == "Delete"; gaveUp != s.removeFinalizer {
				t.Errorf("finalizer removed %v", s.removeFinalizer)
			}
		})
	}
}
