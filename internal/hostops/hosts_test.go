package hostops_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/hostops"
	"github.com/airshipit/airship-go/internal/hostops/hostopstest"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

const (
	user     = "admin"
	password = "s3cret-Pa55"
)

func addr(name string) string { return "http://bmc.test:8000/redfish/v1/Systems/" + name }

// site is three hosts in two namespaces, each with its Secret and a fake BMC.
func site(t *testing.T, extra ...client.Object) (client.Client, *hostopstest.Factory) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := metal3v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	f := hostopstest.NewFactory()
	var objs []client.Object
	for _, h := range []struct{ ns, name, rack string }{{"metal3", "node-1", "r1"}, {"metal3", "node-2", "r2"}, {"other", "node-1", "r1"}} {
		id := h.ns + "-" + h.name
		objs = append(objs,
			hostopstest.BareMetalHost(h.ns, h.name, "redfish-virtualmedia+http://bmc.test:8000/redfish/v1/Systems/"+id, map[string]string{"rack": h.rack}),
			hostopstest.Secret(h.ns, hostopstest.CredentialsName(h.name), user, password))
		f.Add(addr(id), &hostopstest.Host{Username: user, Password: password})
	}
	objs = append(objs, extra...)
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), f
}

func ids(results []hostops.Result) []string {
	var out []string
	for _, r := range results {
		out = append(out, r.ID())
	}
	return out
}

func TestSelect(t *testing.T) {
	c, _ := site(t)
	tests := []struct {
		sel  hostops.Selector
		want []string
		err  string
	}{
		{sel: hostops.Selector{}, want: []string{"metal3/node-1", "metal3/node-2", "other/node-1"}},
		{sel: hostops.Selector{Name: "node-1"}, want: []string{"metal3/node-1", "other/node-1"}},
		{sel: hostops.Selector{Name: "node-1", Namespace: "other"}, want: []string{"other/node-1"}},
		{sel: hostops.Selector{Namespace: "metal3"}, want: []string{"metal3/node-1", "metal3/node-2"}},
		{sel: hostops.Selector{LabelSelector: "rack=r1"}, want: []string{"metal3/node-1", "other/node-1"}},
		{sel: hostops.Selector{LabelSelector: "rack in (r1,r2)", Namespace: "metal3"}, want: []string{"metal3/node-1", "metal3/node-2"}},
		{sel: hostops.Selector{Name: "node-2", Namespace: "metal3", LabelSelector: "rack=r1"}, err: `no BareMetalHost matches name "node-2", labels "rack=r1", in namespace "metal3"`},
		{sel: hostops.Selector{Name: "node-9"}, err: `no BareMetalHost matches name "node-9", in all namespaces`},
		{sel: hostops.Selector{Namespace: "empty"}, err: `no BareMetalHost matches any name and labels, in namespace "empty"`},
		{sel: hostops.Selector{LabelSelector: "rack in ("}, err: `label selector "rack in ("`},
	}
	for _, tt := range tests {
		t.Run(tt.sel.String(), func(t *testing.T) {
			got, err := hostops.Select(context.Background(), c, tt.sel)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Select() error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, h := range got {
				names = append(names, h.Namespace+"/"+h.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Fatalf("Select() = %v, want %v", names, tt.want)
			}
		})
	}
}

func TestRunOperations(t *testing.T) {
	const iso = "http://images.test/ephemeral.iso"
	tests := []struct {
		req       hostops.Request
		before    func(h *hostopstest.Host)
		wantPower provisioner.PowerState
		wantMedia provisioner.MediaState
		wantCalls []string
		wantForce []bool
	}{
		{req: hostops.Request{Operation: v1.BaremetalOperationPowerOn}, wantPower: provisioner.PowerOn, wantCalls: []string{"PowerOn"}},
		{req: hostops.Request{Operation: v1.BaremetalOperationPowerOff}, before: func(h *hostopstest.Host) { h.Power = provisioner.PowerOn },
			wantPower: provisioner.PowerOff, wantCalls: []string{"PowerOff"}, wantForce: []bool{true}},
		{req: hostops.Request{Operation: v1.BaremetalOperationPowerOff, Graceful: true}, before: func(h *hostopstest.Host) { h.Power = provisioner.PowerOn },
			wantPower: provisioner.PowerOff, wantCalls: []string{"PowerOff"}, wantForce: []bool{false}},
		{req: hostops.Request{Operation: v1.BaremetalOperationReboot}, wantPower: provisioner.PowerOn, wantCalls: []string{"Reboot"}, wantForce: []bool{true}},
		{req: hostops.Request{Operation: v1.BaremetalOperationRemoteDirect, ISOURL: iso}, wantPower: provisioner.PowerOn,
			wantMedia: provisioner.MediaState{Inserted: true, Image: iso}, wantCalls: []string{"Boot"}},
		{req: hostops.Request{Operation: v1.BaremetalOperationEjectVirtualMedia},
			before:    func(h *hostopstest.Host) { h.Media = provisioner.MediaState{Inserted: true, Image: iso} },
			wantPower: provisioner.PowerOff, wantCalls: []string{"EjectMedia"}},
		// A slow BMC: the new power state shows only after a few reads.
		{req: hostops.Request{Operation: v1.BaremetalOperationPowerOn}, before: func(h *hostopstest.Host) { h.Lag = 3 },
			wantPower: provisioner.PowerOn, wantCalls: []string{"PowerOn"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s graceful=%v", tt.req.Operation, tt.req.Graceful), func(t *testing.T) {
			c, f := site(t)
			target := addr("metal3-node-1")
			if tt.before != nil {
				f.Add(target, func() *hostopstest.Host {
					h := &hostopstest.Host{Username: user, Password: password}
					tt.before(h)
					return h
				}())
			}
			var mu sync.Mutex
			var progress []string
			r := &hostops.Runner{Client: c, Factory: f, PollInterval: time.Millisecond, Progress: func(p hostops.Progress) {
				mu.Lock()
				defer mu.Unlock()
				progress = append(progress, p.Host+": "+p.Message)
			}}
			res, err := r.Run(context.Background(), hostops.Selector{Name: "node-1", Namespace: "metal3"}, tt.req)
			if err != nil {
				t.Fatalf("Run(): %v", err)
			}
			if len(res) != 1 || res[0].ID() != "metal3/node-1" || res[0].Err != nil {
				t.Fatalf("results = %+v", res)
			}
			if res[0].PowerState != tt.wantPower || res[0].BMC != target {
				t.Fatalf("result %+v, want power %s at %s", res[0], tt.wantPower, target)
			}
			power, media, calls, boots := f.State(target)
			if power != tt.wantPower || media != tt.wantMedia || !slices.Equal(calls, tt.wantCalls) {
				t.Fatalf("host power %s media %+v calls %v; want %s %+v %v", power, media, calls, tt.wantPower, tt.wantMedia, tt.wantCalls)
			}
			if tt.req.Operation == v1.BaremetalOperationRemoteDirect && (len(boots) != 1 || boots[0].Image.URL != iso) {
				t.Fatalf("boots = %+v, want one of %s", boots, iso)
			}
			if tt.req.Operation == v1.BaremetalOperationEjectVirtualMedia && (res[0].Media == nil || res[0].Media.Inserted) {
				t.Fatalf("result media %+v, want ejected", res[0].Media)
			}
			if got := f.Forced(target); !slices.Equal(got, tt.wantForce) {
				t.Fatalf("force arguments %v, want %v", got, tt.wantForce)
			}
			// Only the selected host was touched.
			for _, other := range []string{"metal3-node-2", "other-node-1"} {
				if _, _, calls, _ := f.State(addr(other)); len(calls) != 0 {
					t.Fatalf("host %s was called: %v", other, calls)
				}
			}
			last := progress[len(progress)-1]
			if !strings.HasPrefix(last, "metal3/node-1: done: power "+string(tt.wantPower)) {
				t.Fatalf("last progress %q, all %q", last, progress)
			}
			opens := f.Opens()
			if len(opens) != 1 || opens[0].Credentials != (provisioner.Credentials{Username: user, Password: password}) || !opens[0].Access.VirtualMedia() {
				t.Fatalf("opened %+v", opens)
			}
		})
	}
}

func TestRunFailures(t *testing.T) {
	boom := errors.New("BMC said no")
	c, f := site(t,
		hostopstest.BareMetalHost("metal3", "ipmi", "ipmi://10.0.0.1:623", nil),
		hostopstest.BareMetalHost("metal3", "no-secret", "redfish+http://bmc.test:8000/x", nil),
		hostopstest.BareMetalHost("metal3", "no-password", "redfish+http://bmc.test:8000/x", nil),
		hostopstest.Secret("metal3", hostopstest.CredentialsName("no-password"), user, ""),
		hostopstest.BareMetalHost("metal3", "wrong-password", "redfish+http://bmc.test:8000/redfish/v1/Systems/wrong", nil),
		hostopstest.Secret("metal3", hostopstest.CredentialsName("wrong-password"), user, "not-"+password),
		hostopstest.BareMetalHost("metal3", "unknown", "redfish+http://bmc.test:8000/redfish/v1/Systems/unknown", nil),
		hostopstest.Secret("metal3", hostopstest.CredentialsName("unknown"), user, password),
	)
	f.Add(addr("wrong"), &hostopstest.Host{Username: user, Password: password})
	// A BMC whose error repeats the password it was sent.
	f.Add(addr("metal3-node-2"), &hostopstest.Host{Username: user, Password: password,
		Fail: map[string]error{"PowerOff": fmt.Errorf("login %s:%s: %w", user, password, boom)}})
	var progress []string
	r := &hostops.Runner{Client: c, Factory: f, PollInterval: time.Millisecond, Progress: func(p hostops.Progress) { progress = append(progress, p.Message) }}
	res, err := r.Run(context.Background(), hostops.Selector{Namespace: "metal3"}, hostops.Request{Operation: v1.BaremetalOperationPowerOff})
	if !slices.Contains(progress, "failed: power-off: login admin:***: BMC said no") {
		t.Errorf("progress %q lacks the redacted failure", progress)
	}
	for _, p := range progress {
		if strings.Contains(p, password) {
			t.Errorf("progress holds the password: %s", p)
		}
	}
	if err == nil {
		t.Fatal("Run() succeeded with failing hosts")
	}
	want := map[string]string{
		"metal3/ipmi":           `spec.bmc.address: BMC address scheme "ipmi" is not supported`,
		"metal3/no-secret":      `reading BMC credentials Secret metal3/no-secret-bmc-secret: secrets "no-secret-bmc-secret" not found`,
		"metal3/no-password":    `BMC credentials Secret metal3/no-password-bmc-secret has no "password" key`,
		"metal3/wrong-password": provisioner.ErrCredentials.Error(),
		"metal3/unknown":        "opening BMC http://bmc.test:8000/redfish/v1/Systems/unknown: http://bmc.test:8000/redfish/v1/Systems/unknown: the BMC is unreachable",
		"metal3/node-2":         "power-off: login admin:***: BMC said no",
	}
	if !strings.HasPrefix(err.Error(), fmt.Sprintf("%d of 7 hosts failed", len(want))) {
		t.Fatalf("error %q does not count the failures", err)
	}
	for _, r := range res {
		w, failing := want[r.ID()]
		switch {
		case !failing && r.Err != nil:
			t.Errorf("%s failed: %v", r.ID(), r.Err)
		case failing && (r.Err == nil || !strings.Contains(r.Error, w) || r.Error != r.Err.Error()):
			t.Errorf("%s error %q, want one containing %q", r.ID(), r.Error, w)
		case failing && !strings.Contains(err.Error(), r.ID()+": "+r.Error):
			t.Errorf("Run() error does not name %s: %v", r.ID(), err)
		}
		if strings.Contains(r.Error, password) {
			t.Errorf("%s error holds the password: %s", r.ID(), r.Error)
		}
	}
	if strings.Contains(err.Error(), password) {
		t.Fatalf("error holds the password: %v", err)
	}
	for _, r := range res {
		if r.ID() == "metal3/node-2" && !errors.Is(r.Err, boom) {
			t.Fatalf("redacting lost the error chain: %v", r.Err)
		}
		if r.ID() == "metal3/wrong-password" && !errors.Is(r.Err, provisioner.ErrCredentials) {
			t.Fatalf("wrong credentials not classified: %v", r.Err)
		}
	}
	if got := len(res); got != 7 {
		t.Fatalf("%d results, want 7: %v", got, ids(res))
	}
}

func TestRunValidates(t *testing.T) {
	c, f := site(t)
	r := &hostops.Runner{Client: c, Factory: f}
	for _, req := range []hostops.Request{{Operation: "explode"}, {Operation: v1.BaremetalOperationRemoteDirect}} {
		if _, err := r.Run(context.Background(), hostops.Selector{}, req); err == nil {
			t.Errorf("Run(%+v) succeeded", req)
		}
	}
	if len(f.Opens()) != 0 {
		t.Fatal("a BMC was opened for an invalid request")
	}
	r.Factory = nil
	if _, err := r.Run(context.Background(), hostops.Selector{}, hostops.Request{Operation: v1.BaremetalOperationPowerOn}); err == nil {
		t.Fatal("Run() without a Factory succeeded")
	}
}

func TestRunTimeout(t *testing.T) {
	c, f := site(t)
	// The BMC accepts power-off but the host stays on.
	f.Add(addr("metal3-node-1"), &hostopstest.Host{Username: user, Password: password, Power: provisioner.PowerOn, Ignore: map[string]bool{"PowerOff": true}})
	r := &hostops.Runner{Client: c, Factory: f, PollInterval: time.Millisecond, Timeout: 100 * time.Millisecond}
	res, err := r.Run(context.Background(), hostops.Selector{Name: "node-1", Namespace: "metal3"}, hostops.Request{Operation: v1.BaremetalOperationPowerOff})
	if err == nil {
		t.Fatal("Run() succeeded while a host stayed on")
	}
	if !strings.Contains(err.Error(), "1 of 1 hosts failed") || !strings.Contains(err.Error(), "metal3/node-1: power-off: power Off not reached (power On)") {
		t.Fatalf("error %v", err)
	}
	if len(res) != 1 || !errors.Is(res[0].Err, context.DeadlineExceeded) {
		t.Fatalf("results %+v", res)
	}
}

func TestRunParallelism(t *testing.T) {
	c, f := site(t)
	const limit = 2
	var mu sync.Mutex
	inFlight, peak := 0, 0
	released := make(chan struct{})
	var once sync.Once
	// Each operation waits until limit operations are running at once.
	block := func(ctx context.Context) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		if inFlight == limit {
			once.Do(func() { close(released) })
		}
		mu.Unlock()
		select {
		case <-released:
		case <-ctx.Done():
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	for _, id := range []string{"metal3-node-1", "metal3-node-2", "other-node-1"} {
		f.Add(addr(id), &hostopstest.Host{Username: user, Password: password, Block: block})
	}
	r := &hostops.Runner{Client: c, Factory: f, PollInterval: time.Millisecond, Parallelism: limit, Timeout: 30 * time.Second}
	if _, err := r.Run(context.Background(), hostops.Selector{}, hostops.Request{Operation: v1.BaremetalOperationPowerOn}); err != nil {
		t.Fatal(err)
	}
	if peak != limit {
		t.Fatalf("%d hosts worked on at once, want %d", peak, limit)
	}
}

func TestStatus(t *testing.T) {
	c, f := site(t,
		hostopstest.BareMetalHost("plain", "pxe", "redfish+http://bmc.test:8000/redfish/v1/Systems/pxe", nil),
		hostopstest.Secret("plain", hostopstest.CredentialsName("pxe"), user, password),
		hostopstest.BareMetalHost("plain", "down", "redfish+http://bmc.test:8000/redfish/v1/Systems/down", nil),
		hostopstest.Secret("plain", hostopstest.CredentialsName("down"), user, password),
	)
	f.Add(addr("metal3-node-2"), &hostopstest.Host{Username: user, Password: password, Power: provisioner.PowerOn,
		Media: provisioner.MediaState{Inserted: true, Image: "http://i/x.iso"}})
	f.Add(addr("pxe"), &hostopstest.Host{Username: user, Password: password, Power: provisioner.PowerOn})
	r := &hostops.Runner{Client: c, Factory: f}
	res, err := r.Status(context.Background(), hostops.Selector{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		id    string
		power provisioner.PowerState
		media *hostops.Media
		err   bool
	}
	want := []row{
		{"metal3/node-1", provisioner.PowerOff, &hostops.Media{}, false},
		{"metal3/node-2", provisioner.PowerOn, &hostops.Media{Inserted: true, Image: "http://i/x.iso"}, false},
		{"other/node-1", provisioner.PowerOff, &hostops.Media{}, false},
		{"plain/down", "", nil, true},
		// redfish:// boots over the network: its virtual CD is not read.
		{"plain/pxe", provisioner.PowerOn, nil, false},
	}
	if len(res) != len(want) {
		t.Fatalf("results %v", ids(res))
	}
	for i, w := range want {
		g := res[i]
		if g.ID() != w.id || g.PowerState != w.power || (g.Err != nil) != w.err || (g.Media == nil) != (w.media == nil) || (g.Media != nil && *g.Media != *w.media) {
			t.Errorf("result %d = %+v (media %+v), want %+v", i, g, g.Media, w)
		}
	}
	if err := hostops.Failed(res); err == nil || !strings.Contains(err.Error(), "1 of 5 hosts failed") || !strings.Contains(err.Error(), "plain/down") {
		t.Fatalf("Failed() = %v", err)
	}
	// Asked about remote-direct, a redfish:// host's virtual CD is read too.
	f.Add(addr("pxe"), &hostopstest.Host{Username: user, Password: password, Power: provisioner.PowerOn, Media: provisioner.MediaState{Inserted: true, Image: "http://i/y.iso"}})
	want2 := hostops.Request{Operation: v1.BaremetalOperationRemoteDirect, ISOURL: "http://i/y.iso"}
	res, err = r.Status(context.Background(), hostops.Selector{Name: "pxe"}, &want2)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Media == nil || !want2.Reached(res[0]) {
		t.Fatalf("status %+v, want remote-direct reached", res)
	}
}

func TestReached(t *testing.T) {
	on, off := provisioner.PowerOn, provisioner.PowerOff
	iso := "http://i/a.iso"
	tests := []struct {
		op   v1.BaremetalOperation
		res  hostops.Result
		want bool
	}{
		{v1.BaremetalOperationPowerOn, hostops.Result{PowerState: on}, true},
		{v1.BaremetalOperationPowerOn, hostops.Result{PowerState: off}, false},
		{v1.BaremetalOperationReboot, hostops.Result{PowerState: on}, true},
		{v1.BaremetalOperationPowerOff, hostops.Result{PowerState: off}, true},
		{v1.BaremetalOperationPowerOff, hostops.Result{PowerState: off, Err: errors.New("x")}, false},
		{v1.BaremetalOperationRemoteDirect, hostops.Result{PowerState: on, Media: &hostops.Media{Inserted: true, Image: iso}}, true},
		{v1.BaremetalOperationRemoteDirect, hostops.Result{PowerState: on, Media: &hostops.Media{Inserted: true, Image: "http://i/other.iso"}}, false},
		{v1.BaremetalOperationRemoteDirect, hostops.Result{PowerState: off, Media: &hostops.Media{Inserted: true, Image: iso}}, false},
		{v1.BaremetalOperationRemoteDirect, hostops.Result{PowerState: on}, false},
		{v1.BaremetalOperationEjectVirtualMedia, hostops.Result{PowerState: on, Media: &hostops.Media{}}, true},
		{v1.BaremetalOperationEjectVirtualMedia, hostops.Result{PowerState: on}, false},
		{v1.BaremetalOperationEjectVirtualMedia, hostops.Result{Media: &hostops.Media{Inserted: true, Image: iso}}, false},
	}
	for i, tt := range tests {
		req := hostops.Request{Operation: tt.op, ISOURL: iso}
		if got := req.Reached(tt.res); got != tt.want {
			t.Errorf("%d: %s Reached(%+v) = %v, want %v", i, tt.op, tt.res, got, tt.want)
		}
	}
}

// TestSafeAddress: what listhosts and dry runs print never holds the
// password, wherever the address puts it.
func TestSafeAddress(t *testing.T) {
	tests := map[string]string{
		"redfish+http://h:8000/redfish/v1/Systems/1":                    "redfish+http://h:8000/redfish/v1/Systems/1",
		"redfish://admin:hunter2@h/redfish/v1/Systems/1":                "redfish://admin:REDACTED@h/redfish/v1/Systems/1",
		"redfish://admin:p@ss@h":                                        "redfish://admin:REDACTED@h",
		"redfish://h/redfish/v1/Systems/a@b":                            "redfish://REDACTED@b",
		"10.0.0.1:623":                                                  "10.0.0.1:623",
		"admin:hunter2@10.0.0.1":                                        "admin:REDACTED@10.0.0.1",
		"admin:hunter2@10.0.0.1:623":                                    "admin:REDACTED@10.0.0.1:623",
		"redfish+http://h/redfish/v1/Systems/1?password=hunter2":        "redfish+http://h/redfish/v1/Systems/1?REDACTED",
		"redfish+http://h/redfish/v1/Systems/1#hunter2":                 "redfish+http://h/redfish/v1/Systems/1#REDACTED",
		"10.0.0.1/redfish/v1/Systems/1?user=admin&password=hunter2":     "10.0.0.1/redfish/v1/Systems/1?REDACTED",
		"redfish://admin:hunter2/with-slash@h/redfish/v1/Systems/1":     "redfish://admin:REDACTED@h/redfish/v1/Systems/1",
		"redfish://admin:hunter2?with-question-mark@h/redfish/v1/Sys/1": "redfish://REDACTED",
	}
	for in, want := range tests {
		got := hostops.SafeAddress(in)
		if got != want {
			t.Errorf("SafeAddress(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "hunter2") {
			t.Errorf("SafeAddress(%q) = %q shows the password", in, got)
		}
	}
}
