package baremetalhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/metal3/metal3operator"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/direct"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

const (
	username = "admin"
	password = "s3cret-BMC-password"
)

// logSink keeps every log line of the operator, to look for decisions and
// for secrets.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, prefix+" "+args)
}

func (l *logSink) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// rig is a real API server, the emulator over HTTP and the operator.
type rig struct {
	t    *testing.T
	c    client.Client
	emu  *emulator.Server
	logs *logSink
	ns   string
}

func newRig(t *testing.T, hosts int) *rig {
	t.Helper()
	return newRigWith(t, hosts, emulator.Options{}, nil)
}

// newRigWith is newRig with the emulator's options and the operator's
// adjusted by mutate.
func newRigWith(t *testing.T, hosts int, eo emulator.Options, mutate func(*metal3operator.Options)) *rig {
	t.Helper()
	env := testenv.StartAPI(t, testenv.Options{CRDDirs: []string{"config/metal3/crd/bases"}, AddToScheme: []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// Booted hosts become Nodes of the same API server.
	eo.TargetConfig = env.Config
	emu, err := emulator.New(emulator.Config{Username: username, Password: password, Hosts: emulator.Generate(hosts, 2)}, eo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emu.Start(ctx, "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	logs := &logSink{}
	log := funcr.New(logs.add, funcr.Options{Verbosity: 1})
	o := metal3operator.DefaultOptions()
	o.LeaderElection = false
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.SkipControllerNameValidation = true
	o.PowerPollInterval = 300 * time.Millisecond
	o.BMCTimeout = 2 * time.Second
	if mutate != nil {
		mutate(&o)
	}
	mgr, err := metal3operator.NewManager(ctx, env.Config, o, log)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, ctx, "manager", mgr.Start)
	r := &rig{t: t, c: env.Client, emu: emu, logs: logs, ns: "metal3"}
	if err := r.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.checkNoSecrets() })
	return r
}

// newIronicRig is a rig whose operator drives inst: hosts' deploy agents
// heartbeat every 2 s, download images from their URLs (with "local" the
// conductor serves them through a symlink that localironic's image
// server refuses) and steps under way are looked at every second.
func newIronicRig(t *testing.T, hosts int, inst *localironic.Instance) *rig {
	t.Helper()
	return newRigWith(t, hosts, emulator.Options{HeartbeatInterval: 2 * time.Second}, func(o *metal3operator.Options) {
		o.IronicEndpoint, o.DeployISO = inst.APIURL, inst.DeployISOURL
		o.IronicImageDownloadSource = "http"
		o.ProvisionPollInterval = time.Second
	})
}

// host creates a host's BMC Secret and BareMetalHost for emulated host i.
func (r *rig) host(i int, secretPassword string, mutate func(*metal3v1alpha1.BareMetalHost)) *metal3v1alpha1.BareMetalHost {
	r.t.Helper()
	name := fmt.Sprintf("host-%04d", i)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: name + "-bmc-secret"}, Data: map[string][]byte{"username": []byte(username), "password": []byte(secretPassword)}}
	if err := r.c.Create(context.Background(), sec); err != nil {
		r.t.Fatal(err)
	}
	h := &metal3v1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: name},
		Spec: metal3v1alpha1.BareMetalHostSpec{
			BMC:            metal3v1alpha1.BMCDetails{Address: r.emu.Address(name), CredentialsName: sec.Name},
			BootMACAddress: "",
		},
	}
	if mutate != nil {
		mutate(h)
	}
	if err := r.c.Create(context.Background(), h); err != nil {
		r.t.Fatal(err)
	}
	return h
}

// wait polls the host until ok says so.
func (r *rig) wait(name, what string, ok func(h *metal3v1alpha1.BareMetalHost) bool) *metal3v1alpha1.BareMetalHost {
	r.t.Helper()
	h := &metal3v1alpha1.BareMetalHost{}
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := r.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: name}, h); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(h), nil
	})
	if err != nil {
		st, _ := json.Marshal(h.Status)
		r.t.Fatalf("host %s never %s: status %s", name, what, st)
	}
	return h
}

func (r *rig) waitState(name string, s metal3v1alpha1.ProvisioningState) *metal3v1alpha1.BareMetalHost {
	r.t.Helper()
	return r.wait(name, "reached "+string(s), func(h *metal3v1alpha1.BareMetalHost) bool {
		return h.Status.Provisioning.State == s && h.Status.ErrorType == ""
	})
}

func (r *rig) update(name string, mutate func(*metal3v1alpha1.BareMetalHost)) {
	r.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		h := &metal3v1alpha1.BareMetalHost{}
		if err := r.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: name}, h); err != nil {
			return false, err
		}
		mutate(h)
		if err := r.c.Update(ctx, h); err != nil {
			if apierrors.IsConflict(err) {
				return false, nil
			}
			return false, err
		}
		return true, nil
	})
	if err != nil {
		r.t.Fatalf("updating %s: %v", name, err)
	}
}

// waitEvent waits for an event of the given reason about the host, through
// the events.k8s.io API.
func (r *rig) waitEvent(name, reason string) eventsv1.Event {
	r.t.Helper()
	var found eventsv1.Event
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var evs eventsv1.EventList
		if err := r.c.List(ctx, &evs, client.InNamespace(r.ns)); err != nil {
			return false, nil
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == name && e.Reason == reason {
				found = e
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		r.t.Fatalf("no %s event for %s", reason, name)
	}
	return found
}

// waitNode waits until the Node exists (gone false) or is gone (gone true).
func (r *rig) waitNode(name string, gone bool) {
	r.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := r.c.Get(ctx, types.NamespacedName{Name: name}, &corev1.Node{})
		if apierrors.IsNotFound(err) {
			return gone, nil
		}
		return err == nil && !gone, nil
	})
	if err != nil {
		r.t.Fatalf("Node %s never %s", name, map[bool]string{true: "deleted", false: "created"}[gone])
	}
}

func (r *rig) waitEmu(name, what string, ok func(emulator.HostState) bool) emulator.HostState {
	r.t.Helper()
	var st emulator.HostState
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		var found bool
		st, found = r.emu.State(name)
		return found && ok(st), nil
	})
	if err != nil {
		r.t.Fatalf("emulated host %s never %s: %+v", name, what, st)
	}
	return st
}

// checkNotShown greps logs, events and the hosts' statuses for a secret
// that the hosts' specs may hold.
func (r *rig) checkNotShown(secret string) {
	r.t.Helper()
	ctx := context.Background()
	var hosts metal3v1alpha1.BareMetalHostList
	_ = r.c.List(ctx, &hosts)
	var statuses []metal3v1alpha1.BareMetalHostStatus
	for _, h := range hosts.Items {
		statuses = append(statuses, h.Status)
	}
	st, _ := json.Marshal(statuses)
	var evs eventsv1.EventList
	_ = r.c.List(ctx, &evs)
	ev, _ := json.Marshal(evs)
	for what, text := range map[string]string{"logs": r.logs.all(), "events": string(ev), "statuses": string(st)} {
		if strings.Contains(text, secret) {
			r.t.Errorf("the %s show a secret (%q)", what, secret)
		}
	}
}

// checkNoSecrets greps logs, events and hosts for the BMC passwords and
// the user-data.
func (r *rig) checkNoSecrets() {
	ctx := context.Background()
	var hosts metal3v1alpha1.BareMetalHostList
	_ = r.c.List(ctx, &hosts)
	st, _ := json.Marshal(hosts)
	var evs eventsv1.EventList
	_ = r.c.List(ctx, &evs)
	ev, _ := json.Marshal(evs)
	for _, secret := range []string{password, "wrong-password", userData} {
		for what, text := range map[string]string{"logs": r.logs.all(), "events": string(ev), "hosts": string(st)} {
			if strings.Contains(text, secret) {
				r.t.Errorf("the %s show a secret (%q)", what, secret)
			}
		}
	}
}

const userData = "#cloud-config\nruncmd: [echo user-data-SECRET]\n"

// liveISO serves, until the test ends, a live ISO for host name that is
// a config drive naming the host (as a live ISO of Metal3 carries its own
// configuration), and returns its URL.
func (r *rig) liveISO(name string) string {
	r.t.Helper()
	img, err := configdrive.Build(configdrive.Data{MetaData: []byte(`{"local-hostname": "` + name + `"}`)})
	if err != nil {
		r.t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(img) }))
	r.t.Cleanup(srv.Close)
	return srv.URL + "/" + name + ".iso"
}

// provisionOn gives the host a live-iso image, user-data and meta-data
// (which the direct provisioner does not send: the ISO carries its own),
// and online: true.
func (r *rig) provisionOn(name string) string {
	r.t.Helper()
	ctx := context.Background()
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: name + "-user-data"}, Data: map[string][]byte{"userData": []byte(userData)}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: name + "-meta-data"}, Data: map[string][]byte{"metaData": []byte("local-hostname: " + name + "\nname: " + name + "-machine\n")}},
	} {
		if err := r.c.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			r.t.Fatal(err)
		}
	}
	url, format := r.liveISO(name), direct.LiveISO
	r.update(name, func(h *metal3v1alpha1.BareMetalHost) {
		h.Spec.Online = true
		h.Spec.Image = &metal3v1alpha1.Image{URL: url, DiskFormat: &format}
		h.Spec.UserData = &corev1.SecretReference{Name: name + "-user-data"}
		h.Spec.MetaData = &corev1.SecretReference{Name: name + "-meta-data"}
	})
	return url
}

// TestLifecycle walks one host through every state: registering,
// inspecting, preparing, available, provisioning, provisioned,
// deprovisioning, available again, provisioned again, then deleted through
// deprovisioning, powering off before delete and deleting.
func TestLifecycle(t *testing.T) {
	r := newRig(t, 2)
	r.host(0, password, nil)
	h := r.waitState("host-0000", metal3v1alpha1.StateAvailable)

	// Registered with the Secret it was given, inspected from the BMC.
	if h.Status.GoodCredentials.Reference == nil || h.Status.GoodCredentials.Reference.Name != "host-0000-bmc-secret" || h.Status.GoodCredentials.Version == "" {
		t.Errorf("goodCredentials %+v", h.Status.GoodCredentials)
	}
	if h.Status.TriedCredentials != h.Status.GoodCredentials && h.Status.TriedCredentials.Version != h.Status.GoodCredentials.Version {
		t.Errorf("triedCredentials %+v, goodCredentials %+v", h.Status.TriedCredentials, h.Status.GoodCredentials)
	}
	if h.Status.OperationalStatus != metal3v1alpha1.OperationalStatusOK || h.Status.PoweredOn {
		t.Errorf("operationalStatus %q poweredOn %v", h.Status.OperationalStatus, h.Status.PoweredOn)
	}
	oh := h.Status.OperationHistory
	if oh.Register.Start.IsZero() || oh.Register.End.IsZero() || oh.Inspect.Start.IsZero() || oh.Inspect.End.IsZero() || oh.Inspect.End.Before(&oh.Register.Start) {
		t.Errorf("operationHistory %+v", oh)
	}
	want := emulator.Generate(2, 2)[0]
	hw := h.Status.HardwareDetails
	if hw == nil {
		t.Fatal("no status.hardware")
	}
	if hw.CPU.Count != want.CPUs || hw.RAMMebibytes != want.MemoryMiB || len(hw.NIC) != len(want.NICs) || !strings.EqualFold(hw.NIC[0].MAC, want.NICs[0].MAC) || len(hw.Storage) != len(want.Disks) {
		t.Errorf("hardware %+v does not match the emulator's inventory %+v", hw, want)
	}
	if h.Status.HardwareProfile != "unknown" {
		t.Errorf("hardwareProfile %q", h.Status.HardwareProfile)
	}
	if !slices.Contains(h.Finalizers, metal3v1alpha1.BareMetalHostFinalizer) {
		t.Errorf("finalizers %v", h.Finalizers)
	}

	// Provisioning a live ISO: the BMC gets its URL, nothing else, and
	// the host boots it (the emulator registers the Node of the ISO's
	// config drive).
	iso := r.provisionOn("host-0000")
	h = r.waitState("host-0000", metal3v1alpha1.StateProvisioned)
	st := r.waitEmu("host-0000", "booted the live ISO", func(s emulator.HostState) bool { return s.PowerOn && s.Booted && s.BootedFrom == "Cd" })
	if want := (emulator.Media{Inserted: true, Image: iso, WriteProtected: true, TransferMethod: "Stream"}); st.Media != want {
		t.Errorf("the BMC got %+v, want %+v", st.Media, want)
	}
	r.waitNode("host-0000", false)
	if h.Status.Provisioning.Image.URL != iso || h.Status.Provisioning.ID != string(h.UID) || !h.Status.PoweredOn {
		t.Errorf("provisioning status %+v poweredOn %v", h.Status.Provisioning, h.Status.PoweredOn)
	}
	if h.Status.OperationHistory.Provision.End.IsZero() {
		t.Error("no provision end time")
	}

	// The reboot annotation reboots once and goes away.
	resets := st.Resets
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) {
		metav1.SetMetaDataAnnotation(&h.ObjectMeta, metal3v1alpha1.RebootAnnotationPrefix, `{"mode":"hard"}`)
	})
	r.wait("host-0000", "dropped the reboot annotation", func(h *metal3v1alpha1.BareMetalHost) bool {
		_, ok := h.Annotations[metal3v1alpha1.RebootAnnotationPrefix]
		return !ok
	})
	if st := r.waitEmu("host-0000", "was reset", func(s emulator.HostState) bool { return s.Resets > resets }); !st.PowerOn {
		t.Error("the host is off after a reboot")
	}

	// online: false powers off a provisioned host and keeps it provisioned.
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Online = false })
	r.wait("host-0000", "powered off", func(h *metal3v1alpha1.BareMetalHost) bool { return !h.Status.PoweredOn })
	r.waitEmu("host-0000", "powered off", func(s emulator.HostState) bool { return !s.PowerOn })
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Online = true })
	r.wait("host-0000", "powered on", func(h *metal3v1alpha1.BareMetalHost) bool { return h.Status.PoweredOn })

	// Taking the image away deprovisions: media ejected, host off, available.
	// online goes false with it: an available host that is online is
	// powered on again, as upstream's are.
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Image = nil; h.Spec.Online = false })
	h = r.waitState("host-0000", metal3v1alpha1.StateAvailable)
	if st := r.waitEmu("host-0000", "ejected and off", func(s emulator.HostState) bool { return !s.PowerOn && !s.Media.Inserted }); st.Media.Image != "" {
		t.Errorf("media after deprovisioning %+v", st.Media)
	}
	if h.Status.Provisioning.Image.URL != "" || h.Status.OperationHistory.Deprovision.End.IsZero() {
		t.Errorf("after deprovisioning: provisioning %+v history %+v", h.Status.Provisioning, h.Status.OperationHistory.Deprovision)
	}

	// Deleting a provisioned host deprovisions it first.
	r.provisionOn("host-0000")
	r.waitState("host-0000", metal3v1alpha1.StateProvisioned)
	r.waitEmu("host-0000", "booted again", func(s emulator.HostState) bool { return s.PowerOn && s.Media.Inserted })
	if err := r.c.Delete(context.Background(), &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "host-0000"}}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		err := r.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: "host-0000"}, &metal3v1alpha1.BareMetalHost{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatal("the deleted host never went away")
	}
	if st, _ := r.emu.State("host-0000"); st.PowerOn || st.Media.Inserted {
		t.Errorf("a deleted host was left %+v", st)
	}
	// The states it went through, from the controller's own log.
	var seen []string
	for _, l := range strings.Split(r.logs.all(), "\n") {
		if strings.Contains(l, "state changed") && strings.Contains(l, "host-0000") {
			// "to"="<state>": states may hold spaces.
			if _, rest, ok := strings.Cut(l, `"to"="`); ok {
				state, _, _ := strings.Cut(rest, `"`)
				seen = append(seen, state)
			}
		}
	}
	for _, s := range []metal3v1alpha1.ProvisioningState{metal3v1alpha1.StateRegistering, metal3v1alpha1.StateInspecting, metal3v1alpha1.StatePreparing, metal3v1alpha1.StateAvailable, metal3v1alpha1.StateProvisioning, metal3v1alpha1.StateProvisioned, metal3v1alpha1.StateDeprovisioning, metal3v1alpha1.StatePoweringOffBeforeDelete, metal3v1alpha1.StateDeleting} {
		if !slices.Contains(seen, string(s)) {
			t.Errorf("never went through %q (went through %v)", s, seen)
		}
	}
}

// TestWrongCredentialsThenFixed: a registration error naming the problem,
// then recovery once the Secret is fixed.
func TestWrongCredentialsThenFixed(t *testing.T) {
	r := newRig(t, 1)
	r.host(0, "wrong-password", nil)
	h := r.wait("host-0000", "failed to register", func(h *metal3v1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == metal3v1alpha1.RegistrationError
	})
	if h.Status.OperationalStatus != metal3v1alpha1.OperationalStatusError || !strings.Contains(h.Status.ErrorMessage, "credentials") || h.Status.ErrorCount < 1 {
		t.Errorf("status %+v", h.Status)
	}
	if h.Status.GoodCredentials.Reference != nil || h.Status.TriedCredentials.Reference == nil {
		t.Errorf("tried %+v good %+v", h.Status.TriedCredentials, h.Status.GoodCredentials)
	}
	sec := &corev1.Secret{}
	if err := r.c.Get(context.Background(), types.NamespacedName{Namespace: r.ns, Name: "host-0000-bmc-secret"}, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data["password"] = []byte(password)
	if err := r.c.Update(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	h = r.waitState("host-0000", metal3v1alpha1.StateAvailable)
	if h.Status.ErrorMessage != "" || h.Status.ErrorCount != 0 || h.Status.GoodCredentials.Version != sec.ResourceVersion && h.Status.GoodCredentials.Version == "" {
		t.Errorf("status after the fix %+v", h.Status)
	}
}

// TestUnsupportedScheme: an address that cannot be used is a registration
// error naming what is wrong, never quoting user information, a query or a
// fragment (the rig's cleanup greps logs, events and statuses for the
// password too).
func TestUnsupportedScheme(t *testing.T) {
	const inAddress = "pw-IN-the-ADDRESS"
	tests := []struct {
		address string
		want    []string
	}{
		{address: "ipmi://192.168.111.1:6231", want: []string{`"ipmi"`, "redfish-virtualmedia+http://"}},
		{address: "admin:" + inAddress + "@192.168.111.1", want: []string{"the BMC address has no scheme", "redfish-virtualmedia+http://"}},
		{address: "redfish+http://admin:" + inAddress + "@192.168.111.1/redfish/v1/Systems/1", want: []string{"carries credentials"}},
		{address: "redfish+http://192.168.111.1/redfish/v1/Systems/1?password=" + inAddress, want: []string{"redfish+http://192.168.111.1/redfish/v1/Systems/1?REDACTED: a query or fragment"}},
		{address: "redfish+http:///redfish/v1/Systems/1#" + inAddress, want: []string{"redfish+http:///redfish/v1/Systems/1#REDACTED has no host"}},
	}
	r := newRig(t, len(tests))
	for i, tt := range tests {
		r.host(i, password, func(h *metal3v1alpha1.BareMetalHost) { h.Spec.BMC.Address = tt.address })
	}
	for i, tt := range tests {
		h := r.wait(fmt.Sprintf("host-%04d", i), "failed to register", func(h *metal3v1alpha1.BareMetalHost) bool {
			return h.Status.ErrorType == metal3v1alpha1.RegistrationError
		})
		for _, w := range tt.want {
			if !strings.Contains(h.Status.ErrorMessage, w) {
				t.Errorf("%s: errorMessage %q, want it to hold %q", h.Name, h.Status.ErrorMessage, w)
			}
		}
	}
	// The specs hold it; nothing the controller wrote or logged does.
	r.checkNotShown(inAddress)
}

// TestUnreachableMidProvisioning: the BMC goes away while a host is being
// provisioned: error state, then recovery when it is back.
func TestUnreachableMidProvisioning(t *testing.T) {
	r := newRig(t, 1)
	r.host(0, password, nil)
	r.waitState("host-0000", metal3v1alpha1.StateAvailable)
	r.emu.SetFault("host-0000", emulator.Fault{Unreachable: true})
	r.provisionOn("host-0000")
	h := r.wait("host-0000", "failed to provision", func(h *metal3v1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType != "" && h.Status.Provisioning.State == metal3v1alpha1.StateProvisioning
	})
	if h.Status.OperationalStatus != metal3v1alpha1.OperationalStatusError || !strings.Contains(h.Status.ErrorMessage, "unreachable") {
		t.Errorf("status %+v", h.Status)
	}
	r.emu.SetFault("host-0000", emulator.Fault{})
	r.waitState("host-0000", metal3v1alpha1.StateProvisioned)
	r.waitEmu("host-0000", "booted", func(s emulator.HostState) bool { return s.PowerOn && s.Media.Inserted })
}

// TestPausedAndDetached: a paused host is not touched at all; a detached
// one is marked detached and its BMC left alone, deletion included.
func TestPausedAndDetached(t *testing.T) {
	r := newRig(t, 2)
	r.host(0, password, func(h *metal3v1alpha1.BareMetalHost) {
		h.Annotations = map[string]string{metal3v1alpha1.PausedAnnotation: ""}
		h.Spec.Online = true
	})
	r.host(1, password, func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Online = true })
	r.waitState("host-0001", metal3v1alpha1.StateAvailable)
	r.waitEmu("host-0001", "powered on", func(s emulator.HostState) bool { return s.PowerOn })
	// The controller's decision for the paused host, from its log.
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(r.logs.all(), "paused: not reconciling") && strings.Contains(r.logs.all(), "host-0000"), nil
	}); err != nil {
		t.Fatal("the paused host was never looked at")
	}
	h := &metal3v1alpha1.BareMetalHost{}
	if err := r.c.Get(context.Background(), types.NamespacedName{Namespace: r.ns, Name: "host-0000"}, h); err != nil {
		t.Fatal(err)
	}
	if h.Status.Provisioning.State != "" || len(h.Finalizers) != 0 {
		t.Errorf("a paused host was changed: %+v finalizers %v", h.Status, h.Finalizers)
	}
	if st, _ := r.emu.State("host-0000"); st.PowerOn || st.Resets != 0 {
		t.Errorf("a paused host's BMC was used: %+v", st)
	}
	// Unpausing lets it go on.
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { delete(h.Annotations, metal3v1alpha1.PausedAnnotation) })
	r.waitState("host-0000", metal3v1alpha1.StateAvailable)
	r.waitEmu("host-0000", "powered on", func(s emulator.HostState) bool { return s.PowerOn })

	// Detached: status says so; power is left as it is, even on delete
	// (which would power a managed host off).
	r.update("host-0001", func(h *metal3v1alpha1.BareMetalHost) {
		metav1.SetMetaDataAnnotation(&h.ObjectMeta, metal3v1alpha1.DetachedAnnotation, "")
	})
	r.wait("host-0001", "detached", func(h *metal3v1alpha1.BareMetalHost) bool {
		return h.Status.OperationalStatus == metal3v1alpha1.OperationalStatusDetached
	})
	if err := r.c.Delete(context.Background(), &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "host-0001"}}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(r.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: "host-0001"}, &metal3v1alpha1.BareMetalHost{})), nil
	}); err != nil {
		t.Fatal("a deleted detached host was kept")
	}
	if after, _ := r.emu.State("host-0001"); !after.PowerOn {
		t.Error("a detached host was powered off on delete")
	}
}

// TestStatusAnnotationRestored: a host moved from another cluster gets its
// status back from the status annotation and carries on from there.
func TestStatusAnnotationRestored(t *testing.T) {
	r := newRig(t, 1)
	moved := metal3v1alpha1.BareMetalHostStatus{
		OperationalStatus: metal3v1alpha1.OperationalStatusOK,
		HardwareProfile:   "unknown",
		HardwareDetails:   &metal3v1alpha1.HardwareDetails{Hostname: "from-the-old-cluster"},
		Provisioning:      metal3v1alpha1.ProvisionStatus{State: metal3v1alpha1.StateAvailable},
	}
	raw, err := json.Marshal(moved)
	if err != nil {
		t.Fatal(err)
	}
	r.host(0, password, func(h *metal3v1alpha1.BareMetalHost) {
		h.Annotations = map[string]string{metal3v1alpha1.StatusAnnotation: string(raw)}
	})
	h := r.wait("host-0000", "restored and registered", func(h *metal3v1alpha1.BareMetalHost) bool {
		_, ann := h.Annotations[metal3v1alpha1.StatusAnnotation]
		return !ann && h.Status.GoodCredentials.Reference != nil && h.Status.Provisioning.State == metal3v1alpha1.StateAvailable
	})
	if h.Status.HardwareDetails == nil || h.Status.HardwareDetails.Hostname != "from-the-old-cluster" || !h.Status.OperationHistory.Inspect.Start.IsZero() {
		t.Errorf("the moved status was not kept (re-inspected?): %+v", h.Status)
	}
}

// TestCustomDeployProvisions: a host with spec.customDeploy and no image
// goes to provisioned once (no deploy ramdisk here: nothing is booted from
// media, the host is powered on) instead of going round provisioning and
// deprovisioning; removing the custom deploy deprovisions it.
func TestCustomDeployProvisions(t *testing.T) {
	r := newRig(t, 1)
	r.host(0, password, func(h *metal3v1alpha1.BareMetalHost) {
		h.Spec.Online = true
		h.Spec.CustomDeploy = &metal3v1alpha1.CustomDeploy{Method: "install_great_os"}
	})
	h := r.waitState("host-0000", metal3v1alpha1.StateProvisioned)
	if p := h.Status.Provisioning; p.CustomDeploy == nil || p.CustomDeploy.Method != "install_great_os" || p.Image.URL != "" || p.ID != string(h.UID) || !h.Status.PoweredOn {
		t.Errorf("status.provisioning %+v poweredOn %v", p, h.Status.PoweredOn)
	}
	if st := r.waitEmu("host-0000", "powered on", func(s emulator.HostState) bool { return s.PowerOn }); st.Media.Inserted {
		t.Errorf("media inserted for a custom deploy: %+v", st.Media)
	}
	// It got to provisioned without deprovisioning on the way.
	for _, l := range strings.Split(r.logs.all(), "\n") {
		if strings.Contains(l, "state changed") && strings.Contains(l, "host-0000") && strings.Contains(l, `"to"="deprovisioning"`) {
			t.Errorf("deprovisioned on the way: %s", l)
		}
	}
	r.waitEvent("host-0000", "ProvisioningComplete")

	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.CustomDeploy = nil; h.Spec.Online = false })
	h = r.waitState("host-0000", metal3v1alpha1.StateAvailable)
	if h.Status.Provisioning.CustomDeploy != nil || h.Status.OperationHistory.Deprovision.End.IsZero() {
		t.Errorf("after deprovisioning: %+v", h.Status)
	}
	r.waitEmu("host-0000", "powered off", func(s emulator.HostState) bool { return !s.PowerOn })
}

// TestRebootEvents: the reboot annotation on an online host reboots it and
// records a Rebooted event though the status does not change; on an
// offline host it is removed without a reboot (upstream leaves an offline
// host off) and a RebootSkipped event says so.
func TestRebootEvents(t *testing.T) {
	r := newRig(t, 2)
	r.host(0, password, func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Online = true })
	r.host(1, password, nil)
	r.wait("host-0000", "available and on", func(h *metal3v1alpha1.BareMetalHost) bool {
		return h.Status.Provisioning.State == metal3v1alpha1.StateAvailable && h.Status.PoweredOn
	})
	r.waitState("host-0001", metal3v1alpha1.StateAvailable)
	on := r.waitEmu("host-0000", "powered on", func(s emulator.HostState) bool { return s.PowerOn })
	off, _ := r.emu.State("host-0001")
	for _, name := range []string{"host-0000", "host-0001"} {
		r.update(name, func(h *metal3v1alpha1.BareMetalHost) {
			metav1.SetMetaDataAnnotation(&h.ObjectMeta, metal3v1alpha1.RebootAnnotationPrefix, "")
		})
	}

	e := r.waitEvent("host-0000", "Rebooted")
	if e.Type != corev1.EventTypeNormal || e.Regarding.Kind != "BareMetalHost" {
		t.Errorf("event %+v", e)
	}
	if st := r.waitEmu("host-0000", "was reset", func(s emulator.HostState) bool { return s.Resets > on.Resets }); !st.PowerOn {
		t.Errorf("the online host is off after its reboot: %+v", st)
	}

	r.waitEvent("host-0001", "RebootSkipped")
	r.wait("host-0001", "dropped the reboot annotation", func(h *metal3v1alpha1.BareMetalHost) bool {
		_, ok := h.Annotations[metal3v1alpha1.RebootAnnotationPrefix]
		return !ok
	})
	if st, _ := r.emu.State("host-0001"); st.PowerOn || st.Resets != off.Resets {
		t.Errorf("the offline host was powered: resets %d then %d, %+v", off.Resets, st.Resets, st)
	}
}

// TestDeprovisionPoweredOffHost: a provisioned live-ISO host that is
// already off when its image is removed gets its media ejected and no
// power request (it is off), and becomes available.
func TestDeprovisionPoweredOffHost(t *testing.T) {
	r := newRig(t, 1)
	r.host(0, password, nil)
	r.waitState("host-0000", metal3v1alpha1.StateAvailable)
	r.provisionOn("host-0000")
	r.waitState("host-0000", metal3v1alpha1.StateProvisioned)
	r.waitNode("host-0000", false)

	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Online = false })
	r.wait("host-0000", "powered off", func(h *metal3v1alpha1.BareMetalHost) bool { return !h.Status.PoweredOn })
	off := r.waitEmu("host-0000", "powered off", func(s emulator.HostState) bool { return !s.PowerOn })

	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Image = nil })
	r.waitState("host-0000", metal3v1alpha1.StateAvailable)
	if st, _ := r.emu.State("host-0000"); st.PowerOn || st.Media.Inserted || st.Resets != off.Resets {
		t.Errorf("after deprovisioning an off host: %+v (resets before %d)", st, off.Resets)
	}
}

// TestDiskImageRefusedWithoutIronic: with no Ironic, a host given a disk
// image (qcow2) reports a provisioning error naming spec.image and why,
// and nothing is sent to its BMC.
func TestDiskImageRefusedWithoutIronic(t *testing.T) {
	r := newRig(t, 1)
	r.host(0, password, nil)
	r.waitState("host-0000", metal3v1alpha1.StateAvailable)
	before := r.waitEmu("host-0000", "off", func(s emulator.HostState) bool { return !s.PowerOn })
	qcow2 := "qcow2"
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) {
		h.Spec.Online = true
		h.Spec.Image = &metal3v1alpha1.Image{URL: "http://172.22.0.1/images/node.qcow2", Checksum: "0123456789abcdef0123456789abcdef", DiskFormat: &qcow2}
	})
	h := r.wait("host-0000", "refused the disk image", func(h *metal3v1alpha1.BareMetalHost) bool { return h.Status.ErrorMessage != "" })
	// The controller names the step it failed in, then the provisioner's message.
	if h.Status.ErrorMessage != "provisioning: "+direct.ErrDiskImage.Error() || h.Status.ErrorType != metal3v1alpha1.ProvisioningError ||
		h.Status.Provisioning.State != metal3v1alpha1.StateProvisioning || h.Status.OperationalStatus != metal3v1alpha1.OperationalStatusError {
		t.Errorf("status: state %q errorType %q operationalStatus %q errorMessage %q", h.Status.Provisioning.State, h.Status.ErrorType, h.Status.OperationalStatus, h.Status.ErrorMessage)
	}
	if !strings.Contains(h.Status.ErrorMessage, ": spec.image: a disk image needs Ironic") {
		t.Errorf("the error does not name spec.image: %q", h.Status.ErrorMessage)
	}
	if st, _ := r.emu.State("host-0000"); st.PowerOn || st.Media.Inserted || st.Resets != before.Resets || st.BootOverride != before.BootOverride {
		t.Errorf("the BMC was used for a refused image: %+v, before %+v", st, before)
	}
}
