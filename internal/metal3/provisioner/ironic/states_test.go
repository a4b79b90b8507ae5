package ironic

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// outcome is what a call returned and sent, for the tables.
type outcome struct {
	dirty   bool
	errMsg  string // a substring of ErrorMessage, "" for none
	actions []string
}

func check(t *testing.T, name string, f *fakeIronic, res provisioner.Result, err error, want outcome) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.Dirty != want.dirty {
		t.Errorf("%s: Dirty %v, want %v (%+v)", name, res.Dirty, want.dirty, res)
	}
	if (want.errMsg == "") != (res.ErrorMessage == "") || !strings.Contains(res.ErrorMessage, want.errMsg) {
		t.Errorf("%s: ErrorMessage %q, want one with %q", name, res.ErrorMessage, want.errMsg)
	}
	if strings.Contains(res.ErrorMessage, "s3cret-pw") {
		t.Errorf("%s: ErrorMessage holds the password", name)
	}
	if got := f.takeActions(); !reflect.DeepEqual(got, want.actions) {
		t.Errorf("%s: sent %q, want %q", name, got, want.actions)
	}
}

var image = &metal3v1alpha1.Image{URL: "http://127.0.0.1/img.qcow2", Checksum: "http://127.0.0.1/img.qcow2.md5sum"}

func TestStatesToResults(t *testing.T) {
	ctx := context.Background()
	type call func(p provisioner.Provisioner) (provisioner.Result, error)
	register := func(p provisioner.Provisioner) (provisioner.Result, error) {
		res, _, err := p.Register(ctx, provisioner.RegisterData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
		return res, err
	}
	inspect := func(p provisioner.Provisioner) (provisioner.Result, error) {
		res, _, err := p.Inspect(ctx, provisioner.InspectData{})
		return res, err
	}
	prepare := func(p provisioner.Provisioner) (provisioner.Result, error) {
		return p.Prepare(ctx, provisioner.PrepareData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	}
	provision := func(p provisioner.Provisioner) (provisioner.Result, error) {
		return p.Provision(ctx, provisioner.ProvisionData{Image: image, UserData: []byte("#cloud-config\n"), MetaData: []byte(`{"local-hostname":"node-0"}`)})
	}
	adopt := func(p provisioner.Provisioner) (provisioner.Result, error) {
		return p.Adopt(ctx, provisioner.AdoptData{State: metal3v1alpha1.StateProvisioned, Image: *image})
	}
	deprovision := func(p provisioner.Provisioner) (provisioner.Result, error) {
		return p.Deprovision(ctx, provisioner.DeprovisionData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	}
	del := func(p provisioner.Provisioner) (provisioner.Result, error) { return p.Delete(ctx) }
	detach := func(p provisioner.Provisioner) (provisioner.Result, error) { return p.Detach(ctx) }
	cases := []struct {
		name      string
		call      call
		state     string
		lastError string
		// first and second call (the retry of a failure).
		first, second outcome
	}{
		{"register enroll", register, "enroll", "", outcome{dirty: true, actions: []string{"PUT provision manage"}}, outcome{dirty: true, actions: []string{"PUT provision manage"}}},
		{"register verify failed", register, "enroll", "HTTP GET http://127.0.0.1:8000/redfish/v1/Systems/node-0 returned code 401",
			outcome{errMsg: "BMC http://127.0.0.1:8000/redfish/v1/Systems/node-0: Ironic could not verify it: HTTP GET"}, outcome{dirty: true, actions: []string{"PUT provision manage"}}},
		{"register verifying", register, "verifying", "", outcome{dirty: true}, outcome{dirty: true}},
		{"register manageable", register, "manageable", "", outcome{}, outcome{}},
		{"register active", register, "active", "", outcome{}, outcome{}},
		{"inspect manageable", inspect, "manageable", "", outcome{dirty: true, actions: []string{"PUT provision inspect"}}, outcome{dirty: true, actions: []string{"PUT provision inspect"}}},
		{"inspect available", inspect, "available", "", outcome{dirty: true, actions: []string{"PUT provision manage"}}, outcome{dirty: true, actions: []string{"PUT provision manage"}}},
		{"inspect wait", inspect, "inspect wait", "", outcome{dirty: true}, outcome{dirty: true}},
		{"inspect failed", inspect, "inspect failed", "no memory", outcome{errMsg: "inspection failed: no memory"}, outcome{dirty: true, actions: []string{"PUT provision inspect"}}},
		{"prepare manageable", prepare, "manageable", "", outcome{dirty: true, actions: []string{"PUT provision provide"}}, outcome{dirty: true, actions: []string{"PUT provision provide"}}},
		{"prepare cleaning", prepare, "clean wait", "", outcome{dirty: true}, outcome{dirty: true}},
		{"prepare available", prepare, "available", "", outcome{}, outcome{}},
		{"prepare clean failed", prepare, "clean failed", "erase failed", outcome{errMsg: "cleaning failed: erase failed"}, outcome{dirty: true, actions: []string{"PUT provision manage"}}},
		{"provision available", provision, "available", "", outcome{dirty: true, actions: []string{"PATCH", "PUT provision active"}}, outcome{dirty: true, actions: []string{"PATCH", "PUT provision active"}}},
		{"provision manageable", provision, "manageable", "", outcome{dirty: true, actions: []string{"PUT provision provide"}}, outcome{dirty: true, actions: []string{"PUT provision provide"}}},
		{"provision still cleaning", provision, "cleaning", "", outcome{dirty: true}, outcome{dirty: true}},
		{"provision wait call-back", provision, "wait call-back", "", outcome{dirty: true}, outcome{dirty: true}},
		{"provision deploy failed", provision, "deploy failed", "checksum mismatch",
			outcome{errMsg: "image provisioning failed (image http://127.0.0.1/img.qcow2): checksum mismatch"}, outcome{dirty: true, actions: []string{"PATCH", "PUT provision active"}}},
		{"provision active", provision, "active", "", outcome{}, outcome{}},
		{"adopt manageable", adopt, "manageable", "", outcome{dirty: true, actions: []string{"PATCH", "PUT provision adopt"}}, outcome{dirty: true, actions: []string{"PATCH", "PUT provision adopt"}}},
		{"adopt active", adopt, "active", "", outcome{}, outcome{}},
		{"adopting", adopt, "adopting", "", outcome{dirty: true}, outcome{dirty: true}},
		{"adopt failed", adopt, "adopt failed", "takeover failed", outcome{errMsg: "adoption failed: takeover failed"}, outcome{dirty: true, actions: []string{"PATCH", "PUT provision adopt"}}},
		{"deprovision active", deprovision, "active", "", outcome{dirty: true, actions: []string{"PUT provision deleted"}}, outcome{dirty: true, actions: []string{"PUT provision deleted"}}},
		{"deprovision deploy failed", deprovision, "deploy failed", "x", outcome{dirty: true, actions: []string{"PUT provision deleted"}}, outcome{dirty: true, actions: []string{"PUT provision deleted"}}},
		{"deprovision deleting", deprovision, "deleting", "", outcome{dirty: true}, outcome{dirty: true}},
		{"deprovision available", deprovision, "available", "", outcome{}, outcome{}},
		{"deprovision error", deprovision, "error", "tear down failed", outcome{errMsg: "deprovisioning failed: tear down failed"}, outcome{dirty: true, actions: []string{"PUT provision deleted"}}},
		{"delete manageable", del, "manageable", "", outcome{actions: []string{"DELETE"}}, outcome{}},
		{"delete active", del, "active", "", outcome{actions: []string{"PUT maintenance", "DELETE"}}, outcome{}},
		{"delete clean wait", del, "clean wait", "", outcome{dirty: true, actions: []string{"PUT provision abort"}}, outcome{dirty: true, actions: []string{"PUT provision abort"}}},
		{"detach active", detach, "active", "", outcome{actions: []string{"PUT maintenance", "DELETE"}}, outcome{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, url := newFake(t, node(c.state, c.lastError))
			p := openFake(t, url)
			res, err := c.call(p)
			check(t, "first call", f, res, err, c.first)
			res, err = c.call(p)
			check(t, "second call", f, res, err, c.second)
		})
	}
}

func TestPowerFailureFaultWaits(t *testing.T) {
	n := node("manageable", "")
	n["maintenance"], n["fault"] = true, "power failure"
	f, url := newFake(t, n)
	p := openFake(t, url)
	res, err := p.Prepare(context.Background(), provisioner.PrepareData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	check(t, "prepare during a power failure", f, res, err, outcome{dirty: true})
}

func TestPowerOneRequestPerTransition(t *testing.T) {
	ctx := context.Background()
	n := node("active", "")
	f, url := newFake(t, n)
	p := openFake(t, url)
	res, err := p.PowerOn(ctx)
	check(t, "power on", f, res, err, outcome{dirty: true, actions: []string{"PUT power power on"}})
	// In flight: Ironic shows the target.
	f.mu.Lock()
	n["target_power_state"] = "power on"
	f.mu.Unlock()
	res, err = p.PowerOn(ctx)
	check(t, "power on in flight", f, res, err, outcome{dirty: true})
	f.mu.Lock()
	n["target_power_state"], n["power_state"] = nil, "power on"
	f.mu.Unlock()
	res, err = p.PowerOn(ctx)
	check(t, "power on done", f, res, err, outcome{})
	res, err = p.Reboot(ctx, true)
	check(t, "reboot", f, res, err, outcome{dirty: true, actions: []string{"PUT power rebooting"}})
	res, err = p.Reboot(ctx, true)
	check(t, "reboot done", f, res, err, outcome{})
	res, err = p.PowerOff(ctx, false)
	check(t, "soft power off", f, res, err, outcome{dirty: true, actions: []string{"PUT power soft power off"}})
	f.mu.Lock()
	n["last_error"] = "soft power off timed out"
	f.mu.Unlock()
	res, err = p.PowerOff(ctx, false)
	check(t, "soft power off failed", f, res, err, outcome{errMsg: "soft power off failed: soft power off timed out"})
	// A provision state change holds the node: nothing is sent.
	f.mu.Lock()
	n["target_provision_state"], n["last_error"] = "active", ""
	f.mu.Unlock()
	res, err = p.PowerOff(ctx, true)
	check(t, "power off while deploying", f, res, err, outcome{dirty: true})
}

func TestRegisterCreatesNode(t *testing.T) {
	f, url := newFake(t, nil)
	h := testHost()
	h.BootMACAddress = "52:54:00:AA:BB:01"
	fac, _ := New(Options{Endpoint: url, DeployISO: "http://127.0.0.1/ipa.iso"})
	p, err := fac.Open(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	res, id, err := p.Register(context.Background(), provisioner.RegisterData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeMetadata})
	if err != nil || !res.Dirty || id != "11111111-2222-3333-4444-555555555555" {
		t.Fatalf("Register: %+v %q %v", res, id, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if want := []string{"POST node", "POST port", "PUT provision manage"}; !reflect.DeepEqual(f.actions, want) {
		t.Fatalf("sent %q, want %q", f.actions, want)
	}
	created := f.bodies[0]
	for k, want := range map[string]any{
		"name": "metal3~node-0", "driver": "redfish", "boot_interface": "redfish-virtual-media", "deploy_interface": "direct",
		"inspect_interface": "redfish", "raid_interface": "redfish", "bios_interface": "redfish", "automated_clean": true,
	} {
		if created[k] != want {
			t.Errorf("created node %s = %v, want %v", k, created[k], want)
		}
	}
	di := created["driver_info"].(map[string]any)
	for k, want := range map[string]any{
		"redfish_address": "http://127.0.0.1:8000", "redfish_system_id": "/redfish/v1/Systems/node-0",
		"redfish_username": "admin", "redfish_password": "s3cret-pw", "deploy_iso": "http://127.0.0.1/ipa.iso",
	} {
		if di[k] != want {
			t.Errorf("driver_info %s = %v, want %v", k, di[k], want)
		}
	}
	if _, ok := di["redfish_verify_ca"]; ok {
		t.Errorf("redfish_verify_ca set without disableCertificateVerification")
	}
	if port := f.bodies[1]; port["address"] != "52:54:00:aa:bb:01" || port["pxe_enabled"] != true {
		t.Errorf("port %v", port)
	}
}

func TestRegisterSendsChangedCredentialsOnce(t *testing.T) {
	f, url := newFake(t, node("manageable", ""))
	p := openFake(t, url)
	d := provisioner.RegisterData{CredentialsChanged: true, AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled}
	for i, want := range [][]string{{"PATCH"}, nil} {
		if _, _, err := p.Register(context.Background(), d); err != nil {
			t.Fatal(err)
		}
		if got := f.takeActions(); !reflect.DeepEqual(got, want) {
			t.Errorf("call %d sent %q, want %q", i, got, want)
		}
	}
}

func TestEngineErrors(t *testing.T) {
	ctx := context.Background()
	f, url := newFake(t, node("manageable", ""))
	p := openFake(t, url)
	f.mu.Lock()
	f.status = http.StatusServiceUnavailable
	f.mu.Unlock()
	_, _, err := p.Register(ctx, provisioner.RegisterData{})
	if !errors.Is(err, provisioner.ErrEngineUnavailable) || !strings.Contains(err.Error(), "fake failure") || !strings.Contains(err.Error(), "metal3~node-0") {
		t.Errorf("503: %v, want ErrEngineUnavailable naming the node and Ironic's message", err)
	}
	f.mu.Lock()
	f.status = http.StatusConflict
	f.mu.Unlock()
	res, err := p.Provision(ctx, provisioner.ProvisionData{Image: image})
	if err != nil || !res.Dirty {
		t.Errorf("409: %+v %v, want Dirty", res, err)
	}
	// Nothing listens: connection refused.
	fac, err := New(Options{Endpoint: "http://127.0.0.1:1", HTTPTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fac.Open(ctx, testHost()); !errors.Is(err, provisioner.ErrEngineUnavailable) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("refused: %v, want ErrEngineUnavailable naming the endpoint", err)
	}
}

func TestOldIronicRefused(t *testing.T) {
	f, url := newFake(t, nil)
	f.maxVersion = "1.58"
	fac, err := New(Options{Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fac.Open(context.Background(), testHost())
	if err == nil || !strings.Contains(err.Error(), "1.58") || !strings.Contains(err.Error(), Microversion) || !strings.Contains(err.Error(), url) {
		t.Errorf("Open against API 1.58: %v, want an error naming the endpoint, 1.58 and %s", err, Microversion)
	}
}

func TestErrorsNeverQuoteThePassword(t *testing.T) {
	f, url := newFake(t, node("manageable", ""))
	p := openFake(t, url)
	f.mu.Lock()
	f.status, f.fault = http.StatusBadRequest, "driver_info redfish_password s3cret-pw is refused"
	f.mu.Unlock()
	_, _, err := p.Register(context.Background(), provisioner.RegisterData{CredentialsChanged: true})
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") || !strings.Contains(err.Error(), "REDACTED") {
		t.Errorf("error %v, want the password replaced", err)
	}
}

func TestTLSWithCABundle(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"versions":[{"id":"v1","version":"1.82","min_version":"1.1"}]}`)
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	fac, err := New(Options{Endpoint: srv.URL, CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fac.Open(context.Background(), testHost()); err != nil {
		t.Errorf("with the CA bundle: %v", err)
	}
	fac, err = New(Options{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fac.Open(context.Background(), testHost()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA bundle: %v, want a certificate error", err)
	}
}

func TestVersionCheckFailureIsRemembered(t *testing.T) {
	f, url := newFake(t, nil)
	f.rootStatus = http.StatusServiceUnavailable
	fac, err := newFactory(Options{Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	fac.versionRetry = time.Hour
	for range 3 {
		if _, err := fac.Open(context.Background(), testHost()); !errors.Is(err, provisioner.ErrEngineUnavailable) {
			t.Fatalf("Open with Ironic answering 503: %v", err)
		}
	}
	f.mu.Lock()
	roots := f.roots
	f.rootStatus = 0
	f.mu.Unlock()
	if roots != 1 {
		t.Errorf("%d GET / for 3 Opens within the retry time, want 1", roots)
	}
	fac.versionRetry = 0
	if _, err := fac.Open(context.Background(), testHost()); err != nil {
		t.Errorf("Open after the retry time, Ironic back: %v", err)
	}
}
