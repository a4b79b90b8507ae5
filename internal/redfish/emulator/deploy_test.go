package emulator

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
	"github.com/airshipit/airship-go/internal/ipaagent/ipaagenttest"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// fileServer serves files by path until the test ends and counts the
// requests.
type fileServer struct {
	url  string
	mu   sync.Mutex
	hits map[string]int
}

func (f *fileServer) Hits(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

// files serves files by path until the test ends.
func files(t *testing.T, fs map[string][]byte) string { return serveFiles(t, fs).url }

func serveFiles(t *testing.T, fs map[string][]byte) *fileServer {
	t.Helper()
	f := &fileServer{hits: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.hits[r.URL.Path]++
		f.mu.Unlock()
		data, ok := fs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// deployISO is a deploy ISO naming apiURL, as localironic builds it.
func deployISO(t *testing.T, apiURL string) []byte {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "deploy.iso")
	if err := localironic.WriteDeployISO(p, apiURL, dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// ironicBMC drives one host with raw Redfish requests, as Ironic does.
type ironicBMC struct {
	t          *testing.T
	base, host string
}

func (b ironicBMC) req(method, path, body string, want int) {
	b.t.Helper()
	if st, _, out := do(b.t, method, b.base+path, body, basicHeader(testUser, testPassword)); st != want {
		b.t.Fatalf("%s %s: %d %s, want %d", method, path, st, out, want)
	}
}

func (b ironicBMC) insert(image string) {
	b.t.Helper()
	b.req("POST", managersPath+"/"+b.host+"/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", fmt.Sprintf(`{"Image": %q, "Inserted": true}`, image), 204)
}

func (b ironicBMC) eject() {
	b.t.Helper()
	b.req("POST", managersPath+"/"+b.host+"/VirtualMedia/Cd/Actions/VirtualMedia.EjectMedia", "{}", 204)
}

func (b ironicBMC) boot(target, enabled string) {
	b.t.Helper()
	b.req("PATCH", systemsPath+"/"+b.host, fmt.Sprintf(`{"Boot": {"BootSourceOverrideTarget": %q, "BootSourceOverrideEnabled": %q}}`, target, enabled), 204)
}

func (b ironicBMC) reset(rt string) {
	b.t.Helper()
	b.req("POST", systemsPath+"/"+b.host+"/Actions/ComputerSystem.Reset", fmt.Sprintf(`{"ResetType": %q}`, rt), 204)
}

// bootDeployISO inserts the deploy ISO, boots it once and waits for the
// host's agent.
func (b ironicBMC) bootDeployISO(s *Server, iso string) HostState {
	b.t.Helper()
	b.insert(iso)
	b.boot("Cd", "Once")
	b.reset("On")
	return waitHost(b.t, s, b.host, "running the deploy agent", func(st HostState) bool { return st.Agent != "" && st.BootedFrom == "Cd" })
}

func TestDeployISOStartsAgent(t *testing.T) {
	hosts := Generate(2, 1)
	ironic := ipaagenttest.New(t, hosts[0].NICs[1].MAC, hosts[1].NICs[0].MAC)
	fsrv := serveFiles(t, map[string][]byte{"/deploy.iso": deployISO(t, ironic.URL), "/other.iso": deployISO(t, "")})
	base := fsrv.url
	var log syncBuffer
	s, rf := start(t, Config{Hosts: hosts}, Options{HeartbeatInterval: 50 * time.Millisecond, Log: &log})
	s.SetFault("host-0001", Fault{NoHeartbeat: true})

	a, b := ironicBMC{t, rf, "host-0000"}, ironicBMC{t, rf, "host-0001"}
	stA := a.bootDeployISO(s, base+"/deploy.iso")
	stB := b.bootDeployISO(s, base+"/deploy.iso")
	if stA.Node != "" {
		t.Errorf("a host running the deploy agent has a Node: %+v", stA)
	}
	if n := fsrv.Hits("/deploy.iso"); n != 1 {
		t.Errorf("the deploy ISO of both hosts was fetched %d times, want once", n)
	}
	hb := ironic.WaitHeartbeat(t, 10*time.Second)
	if hb.CallbackURL != stA.Agent || hb.Token != ironic.Token {
		t.Fatalf("heartbeat %+v, host-0000's agent at %s", hb, stA.Agent)
	}
	// host-0001's agent never heartbeats while host-0000's goes on.
	deadline := time.Now().Add(10 * time.Second)
	for len(ironic.Heartbeats()) < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, h := range ironic.Heartbeats() {
		if h.CallbackURL == stB.Agent {
			t.Fatalf("a heartbeat from host-0001, whose agent may not heartbeat")
		}
	}
	// Power off stops the agent: its API goes away.
	a.reset("ForceOff")
	waitHost(t, s, "host-0000", "without an agent", func(st HostState) bool { return st.Agent == "" && !st.PowerOn })
	// The agent stops in the background: its API goes away soon.
	deadline = time.Now().Add(10 * time.Second)
	for {
		if _, err := ironic.Commands(t.Context(), stA.Agent); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent still answers 10 s after power off")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Media without ipa-api-url is a live ISO: it boots, no agent, and
	// no Node (it is no config drive).
	a.eject()
	a.insert(base + "/other.iso")
	a.reset("On")
	st := waitHost(t, s, "host-0000", "booted", func(st HostState) bool { return st.Booted })
	if st.Agent != "" || st.Node != "" || st.BootedFrom != "Cd" {
		t.Errorf("other media: %+v", st)
	}
	if !strings.Contains(log.String(), "neither a deploy ISO nor a config drive: no "+APIURLParam) {
		t.Errorf("log does not say why the media is not a deploy ISO:\n%s", log.String())
	}
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func gzBase64(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// TestDeployThenBootFromDisk: the agent writes an image and a config
// drive; the host then boots from disk and registers the Node the config
// drive's meta-data names; eject then power off keeps it; erasing the
// disk deletes it.
func TestDeployThenBootFromDisk(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	hosts := Generate(1, 1)
	ironic := ipaagenttest.New(t, hosts[0].NICs[0].MAC)
	image := configdrivetest.GPTImage(t, filepath.Join(t.TempDir(), "image.raw"), 16<<20)
	base := files(t, map[string][]byte{"/deploy.iso": deployISO(t, ironic.URL), "/image.raw": image})
	iso, err := configdrive.Build(configdrive.Data{
		MetaData: []byte(`{"uuid": "` + ironic.Node + `", "name": "host-0000", "local-hostname": "deployed-0"}`),
		UserData: []byte("#cloud-config\n{}\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	s, rf := start(t, Config{Hosts: hosts}, Options{TargetConfig: env.Config, HeartbeatInterval: 50 * time.Millisecond, Log: &log})
	h := ironicBMC{t, rf, "host-0000"}
	ctx := t.Context()

	st := h.bootDeployISO(s, base+"/deploy.iso")
	ironic.WaitHeartbeat(t, 10*time.Second)
	r, err := ironic.Step(ctx, st.Agent, "deploy", "write_image", map[string]any{
		"image_info":  map[string]any{"id": "img", "urls": []string{base + "/image.raw"}, "disk_format": "raw", "os_hash_algo": "sha256", "os_hash_value": sha256Hex(image)},
		"configdrive": gzBase64(t, iso),
	}, nil)
	if err != nil || r.CommandStatus != "SUCCEEDED" {
		t.Fatalf("write_image: %+v %v", r.CommandError, err)
	}
	disk := s.DiskPath("host-0000", "sda")
	if d, err := configdrive.ReadFile(disk); err != nil || !strings.Contains(string(d.MetaData), "deployed-0") {
		t.Fatalf("config drive on %s: %v", disk, err)
	}
	// The end of a deploy: the agent powers off; boot from disk, eject
	// while on... as Ironic does (the eject here while off).
	if st, _, err := ironic.Command(ctx, st.Agent, "standby.power_off", map[string]any{}, false); err != nil || st != 200 {
		t.Fatalf("power_off: %d %v", st, err)
	}
	waitHost(t, s, "host-0000", "powered off by the agent", func(st HostState) bool { return !st.PowerOn && st.Agent == "" })
	h.boot("Hdd", "Continuous")
	h.eject()
	h.reset("On")
	st = waitHost(t, s, "host-0000", "booted from disk", func(st HostState) bool { return st.Booted && st.BootedFrom == "Hdd" })
	if st.Node != "deployed-0" || st.NodeDisk != "sda" {
		t.Fatalf("state %+v", st)
	}
	waitNode(t, env.Client, "deployed-0", "created", created)

	// Eject, then power off: the Node stays (NotReady).
	h.eject()
	h.reset("ForceOff")
	waitNode(t, env.Client, "deployed-0", "powered off", poweredOff)
	h.reset("On")
	waitNode(t, env.Client, "deployed-0", "back with kwok", func(n *corev1.Node) bool { return managedByKwok(n) })

	// Cleaning: the deploy ISO again, erase_devices_metadata: the Node goes.
	h.reset("ForceOff")
	st = h.bootDeployISO(s, base+"/deploy.iso")
	r, err = ironic.Step(ctx, st.Agent, "clean", "erase_devices_metadata", nil, nil)
	if err != nil || r.CommandStatus != "SUCCEEDED" {
		t.Fatalf("erase_devices_metadata: %+v %v", r.CommandError, err)
	}
	waitNode(t, env.Client, "deployed-0", "deleted", nil)
	if st := mustState(t, s, "host-0000"); st.Node != "" {
		t.Errorf("state %+v", st)
	}
	// Booting from the erased disk boots nothing.
	h.reset("ForceOff")
	h.eject()
	h.reset("On")
	waitHost(t, s, "host-0000", "on", func(st HostState) bool { return st.PowerOn })
	if !strings.Contains(log.String(), "no disk holds a config drive") {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestDisksSparse: a thousand hosts of 100 GiB disks cost no block
// until written; the state directory the server made goes with Close.
func TestDisksSparse(t *testing.T) {
	s, err := New(Config{Username: testUser, Password: testPassword, Hosts: Generate(1000, 4)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := s.StateDir()
	if p := s.DiskPath("host-0999", "sda"); p != filepath.Join(dir, "host-0999", "sda.img") {
		t.Errorf("DiskPath %q", p)
	}
	for _, h := range s.hosts {
		if _, err := s.agentDisks(h); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("state directory %s after Close: %v", dir, err)
	}
}

func TestKernelParam(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"linux /vmlinuz ipa-api-url=http://10.0.0.1:6385 nofb\n", "http://10.0.0.1:6385"},
		{"menuentry x {\n\tlinuxefi /k ipa-insecure=1 ipa-api-url=\"http://h:1\"\n}\n", "http://h:1"},
		{"append initrd=i ipa-api-url=https://a/b\n", "https://a/b"},
		{"linux /vmlinuz ipa-api-url= nofb\n", ""},
		{"linux /vmlinuz xipa-api-url=http://x\n", ""},
		{"", ""},
	} {
		if got := kernelParam(tc.cfg, APIURLParam); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

// TestBootWaitsForTheMedia: a boot of media still being fetched finishes
// when the fetch does, as a deploy ISO.
func TestBootWaitsForTheMedia(t *testing.T) {
	hosts := Generate(1, 1)
	ironic := ipaagenttest.New(t, hosts[0].NICs[0].MAC)
	iso := deployISO(t, ironic.URL)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(iso)
	}))
	t.Cleanup(srv.Close)
	s, rf := start(t, Config{Hosts: hosts}, Options{HeartbeatInterval: 50 * time.Millisecond})
	h := ironicBMC{t, rf, "host-0000"}
	h.insert(srv.URL + "/deploy.iso")
	h.reset("On")
	if st := mustState(t, s, "host-0000"); st.Booted || st.Agent != "" || !st.PowerOn {
		t.Fatalf("booted before its media was fetched: %+v", st)
	}
	close(release)
	waitHost(t, s, "host-0000", "running the agent", func(st HostState) bool { return st.Booted && st.Agent != "" })
	ironic.WaitHeartbeat(t, 10*time.Second)
}
