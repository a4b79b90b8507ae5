package ipaagent_test

import (
	"bytes"
	"compress/gzip"
	"crypto/md5" //nolint:gosec // the legacy checksum
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/ipaagent"
	"github.com/airshipit/airship-go/internal/ipaagent/ipaagenttest"
)

const mac = "52:54:00:00:00:01"

type host struct {
	ironic  *ipaagenttest.Ironic
	agent   *ipaagent.Agent
	disks   []ipaagent.Disk
	mu      sync.Mutex
	changed []string
	powered chan struct{}
}

func (h *host) Changed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.changed...)
}

// start runs an agent for a host of two disks (sda 8 GiB, sdb 5 GiB)
// against a double of Ironic and waits for its first heartbeat.
func start(t *testing.T, mod func(*ipaagent.Config)) *host {
	t.Helper()
	dir := t.TempDir()
	h := &host{ironic: ipaagenttest.New(t, mac), powered: make(chan struct{}, 1)}
	h.disks = []ipaagent.Disk{
		{Name: "sda", Path: filepath.Join(dir, "sda.img"), Size: 8 << 30, Serial: "S-A"},
		{Name: "sdb", Path: filepath.Join(dir, "sdb.img"), Size: 5 << 30, Serial: "S-B"},
	}
	cfg := ipaagent.Config{
		APIURL: h.ironic.URL, MACs: []string{"52:54:00:00:00:09", strings.ToUpper(mac)}, Disks: h.disks,
		LookupInterval: 50 * time.Millisecond, HeartbeatInterval: 100 * time.Millisecond,
		PowerOff:    func() { h.powered <- struct{}{} },
		DiskChanged: func(d string) { h.mu.Lock(); h.changed = append(h.changed, d); h.mu.Unlock() },
		Logf:        t.Logf,
	}
	if mod != nil {
		mod(&cfg)
	}
	a, err := ipaagent.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	h.agent = a
	if !cfg.NoHeartbeat {
		hb := h.ironic.WaitHeartbeat(t, 10*time.Second)
		if hb.CallbackURL != a.URL() || hb.Version == "" {
			t.Fatalf("heartbeat %+v, agent at %s", hb, a.URL())
		}
	}
	return h
}

// serve serves data at /image?sig=secret.
func serve(t *testing.T, files map[string][]byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func gzipBase64(t *testing.T, b []byte) string {
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

var cdData = configdrive.Data{
	MetaData:    []byte(`{"uuid": "6f0c8a4e", "name": "worker-1", "local-hostname": "worker-1"}`),
	UserData:    []byte("#cloud-config\nhostname: worker-1\n"),
	NetworkData: []byte(`{"links": []}`),
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func writeImageArgs(url string, image []byte, cd string) map[string]any {
	return map[string]any{
		"image_info":  map[string]any{"id": "img", "urls": []string{url}, "disk_format": "raw", "os_hash_algo": "sha256", "os_hash_value": sha(image), "node_uuid": "x"},
		"configdrive": cd,
	}
}

func TestDirectDeploy(t *testing.T) {
	h := start(t, nil)
	image := configdrivetest.GPTImage(t, filepath.Join(t.TempDir(), "image.raw"), 32<<20)
	iso, err := configdrive.Build(cdData)
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, map[string][]byte{"/image.raw": image})
	ctx := t.Context()
	cb := h.agent.URL()

	// get_deploy_steps, as Ironic refreshes its cache.
	st, res, err := h.ironic.Command(ctx, cb, "deploy.get_deploy_steps", map[string]any{"node": map[string]any{}, "ports": []any{}}, true)
	if err != nil || st != http.StatusOK || res.CommandStatus != "SUCCEEDED" {
		t.Fatalf("get_deploy_steps: %d %+v %v", st, res, err)
	}
	var steps struct {
		DeploySteps map[string][]map[string]any `json:"deploy_steps"`
		HWVersion   map[string]string           `json:"hardware_manager_version"`
	}
	if err := json.Unmarshal(res.CommandResult, &steps); err != nil || len(steps.HWVersion) == 0 || !strings.Contains(string(res.CommandResult), `"write_image"`) {
		t.Fatalf("get_deploy_steps result %s: %v", res.CommandResult, err)
	}

	r, err := h.ironic.Step(ctx, cb, "deploy", "write_image", writeImageArgs(base+"/image.raw?sig=secret", image, gzipBase64(t, iso)), map[string]any{})
	if err != nil || r.CommandStatus != "SUCCEEDED" {
		t.Fatalf("write_image: %+v %v (%+v)", r, err, r.CommandError)
	}
	if !strings.Contains(string(r.CommandResult), `"deploy_step":{`) || !strings.Contains(string(r.CommandResult), `"write_image"`) {
		t.Fatalf("write_image result %s: not {deploy_result, deploy_step}", r.CommandResult)
	}
	// The smallest disk of at least 4 GiB: sdb.
	disk := h.disks[1]
	got := make([]byte, len(image))
	f, err := os.Open(disk.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	// The image's partition (1 MiB to its end, less its backup table);
	// its table is rewritten with the config drive's partition.
	if !bytes.Equal(got[1<<20:len(image)-1<<20], image[1<<20:len(image)-1<<20]) {
		t.Fatal("the disk does not hold the image")
	}
	tb, err := configdrive.ReadTable(f, disk.Size)
	if err != nil || len(tb.Partitions) != 2 || tb.Partitions[0].Start != 1<<20 || tb.Partitions[1].Name != "config-2" {
		t.Fatalf("partition table %+v: %v", tb, err)
	}
	if fi, _ := f.Stat(); fi.Size() != disk.Size {
		t.Fatalf("disk file of %d bytes, want %d", fi.Size(), disk.Size)
	}
	// Sparse: the image's data and the config drive, not the 5 GiB.
	if used := allocated(t, disk.Path); used > 40<<20 {
		t.Errorf("disk file uses %d MiB of blocks", used>>20)
	}
	d, err := configdrive.ReadFile(disk.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.UserData, cdData.UserData) || !bytes.Equal(d.MetaData, cdData.MetaData) {
		t.Fatalf("config drive %q %q", d.MetaData, d.UserData)
	}
	if c := h.Changed(); len(c) == 0 || c[0] != "sdb" {
		t.Fatalf("DiskChanged calls %v, want sdb", c)
	}
	if _, err := os.Stat(h.disks[0].Path); err == nil {
		if _, err := configdrive.ReadFile(h.disks[0].Path); err == nil {
			t.Fatal("sda holds a config drive too")
		}
	}

	for _, cmd := range []string{"standby.get_partition_uuids", "standby.sync"} {
		if st, res, err := h.ironic.Command(ctx, cb, cmd, map[string]any{}, true); err != nil || st != 200 || res.CommandStatus != "SUCCEEDED" {
			t.Fatalf("%s: %d %+v %v", cmd, st, res, err)
		}
	}
	// power_off: the host powers off and the heartbeats stop.
	if st, res, err := h.ironic.Command(ctx, cb, "standby.power_off", map[string]any{}, false); err != nil || st != 200 || res.CommandName != "power_off" {
		t.Fatalf("power_off: %d %+v %v", st, res, err)
	}
	select {
	case <-h.powered:
	case <-time.After(10 * time.Second):
		t.Fatal("power_off did not power the host off")
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.agent.Heartbeating() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if h.agent.Heartbeating() {
		t.Fatal("the agent still heartbeats after power_off")
	}
}

func TestWriteImageFailures(t *testing.T) {
	h := start(t, nil)
	image := bytes.Repeat([]byte("raw image "), 100000)
	qcow := append([]byte("QFI\xfb\x00\x00\x00\x03"), make([]byte, 4096)...)
	base := serve(t, map[string][]byte{"/image.raw": image, "/image.qcow2": qcow})
	md5sum := md5.Sum(image) //nolint:gosec // see the import
	for _, tc := range []struct {
		name  string
		args  map[string]any
		want  []string
		never string
	}{
		{"wrong sha256", writeImageArgs(base+"/image.raw?sig=secret", []byte("other"), ""),
			[]string{"checksum mismatch", base + "/image.raw"}, "secret"},
		{"wrong md5", map[string]any{"image_info": map[string]any{"id": "img", "urls": []string{base + "/image.raw?sig=secret"}, "disk_format": "raw", "checksum": "0123"}},
			[]string{"checksum mismatch", "md5"}, "secret"},
		{"qcow2 disk_format", map[string]any{"image_info": map[string]any{"id": "img", "urls": []string{base + "/image.qcow2"}, "disk_format": "qcow2", "os_hash_algo": "sha256", "os_hash_value": sha(qcow)}},
			[]string{"force_raw_images", "qcow2"}, ""},
		{"qcow2 content", map[string]any{"image_info": map[string]any{"id": "img", "urls": []string{base + "/image.qcow2"}, "os_hash_algo": "sha256", "os_hash_value": sha(qcow)}},
			[]string{"qcow2", "force_raw_images"}, ""},
		{"no checksum", map[string]any{"image_info": map[string]any{"id": "img", "urls": []string{base + "/image.raw"}, "disk_format": "raw"}},
			[]string{"no checksum"}, ""},
		{"missing image", writeImageArgs(base+"/gone?sig=secret", image, ""),
			[]string{"404", base + "/gone"}, "secret"},
		{"no root device matches", map[string]any{"image_info": map[string]any{"id": "img", "urls": []string{base + "/image.raw"}, "checksum": hex.EncodeToString(md5sum[:])}, "hints": true},
			[]string{"root device hints"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := map[string]any{}
			if tc.args["hints"] == true {
				props["root_device"] = map[string]any{"serial": "NOPE"}
			}
			r, err := h.ironic.Step(t.Context(), h.agent.URL(), "deploy", "write_image", tc.args, props)
			if err != nil {
				t.Fatal(err)
			}
			if r.CommandStatus != "FAILED" || r.CommandError == nil {
				t.Fatalf("status %s, error %+v", r.CommandStatus, r.CommandError)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.CommandError.Details, w) {
					t.Errorf("error %q does not say %q", r.CommandError.Details, w)
				}
			}
			if tc.never != "" && strings.Contains(r.CommandError.Details, tc.never) {
				t.Errorf("error %q quotes %q", r.CommandError.Details, tc.never)
			}
		})
	}
}

func TestRootDeviceHints(t *testing.T) {
	h := start(t, nil)
	image := []byte("hello disk")
	base := serve(t, map[string][]byte{"/i": image})
	for _, tc := range []struct {
		hints map[string]any
		want  int
	}{
		{map[string]any{"name": "/dev/sda"}, 0},
		{map[string]any{"serial": "S-B"}, 1},
		{map[string]any{"size": ">= 7"}, 0},
		{map[string]any{"size": 5}, 1},
	} {
		r, err := h.ironic.Step(t.Context(), h.agent.URL(), "deploy", "write_image", writeImageArgs(base+"/i", image, ""), map[string]any{"root_device": tc.hints})
		if err != nil || r.CommandStatus != "SUCCEEDED" {
			t.Fatalf("hints %v: %+v %v", tc.hints, r.CommandError, err)
		}
		got := make([]byte, len(image))
		f, err := os.Open(h.disks[tc.want].Path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.ReadAt(got, 0)
		_ = f.Close()
		if err != nil || !bytes.Equal(got, image) {
			t.Fatalf("hints %v: disk %s does not hold the image", tc.hints, h.disks[tc.want].Name)
		}
		if err := os.Remove(h.disks[tc.want].Path); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCleaning(t *testing.T) {
	h := start(t, nil)
	image := configdrivetest.GPTImage(t, filepath.Join(t.TempDir(), "image.raw"), 16<<20)
	iso, err := configdrive.Build(cdData)
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, map[string][]byte{"/image.raw": image})
	ctx := t.Context()
	cb := h.agent.URL()
	disk := h.disks[1]
	deploy := func() {
		t.Helper()
		if r, err := h.ironic.Step(ctx, cb, "deploy", "write_image", writeImageArgs(base+"/image.raw", image, gzipBase64(t, iso)), nil); err != nil || r.CommandStatus != "SUCCEEDED" {
			t.Fatalf("write_image: %+v %v", r.CommandError, err)
		}
		if _, err := configdrive.ReadFile(disk.Path); err != nil {
			t.Fatal(err)
		}
	}
	st, res, err := h.ironic.Command(ctx, cb, "clean.get_clean_steps", map[string]any{"node": map[string]any{}, "ports": []any{}}, true)
	if err != nil || st != 200 || !strings.Contains(string(res.CommandResult), "erase_devices_metadata") || !strings.Contains(string(res.CommandResult), "clean_steps") {
		t.Fatalf("get_clean_steps: %d %s %v", st, res.CommandResult, err)
	}
	for _, step := range []string{"erase_devices_metadata", "erase_devices"} {
		deploy()
		r, err := h.ironic.Step(ctx, cb, "clean", step, nil, nil)
		if err != nil || r.CommandStatus != "SUCCEEDED" || !strings.Contains(string(r.CommandResult), `"clean_step"`) {
			t.Fatalf("%s: %+v %s %v", step, r.CommandError, r.CommandResult, err)
		}
		if _, err := configdrive.ReadFile(disk.Path); err == nil {
			t.Fatalf("after %s the disk still holds a config drive", step)
		}
		if _, err := configdrive.ReadTable(mustOpen(t, disk.Path), disk.Size); err == nil {
			t.Fatalf("after %s the disk still has a partition table", step)
		}
	}
	fi, err := os.Stat(disk.Path)
	if err != nil || fi.Size() != disk.Size {
		t.Fatalf("after erase_devices: %v, size %d", err, fi.Size())
	}
	if used := allocated(t, disk.Path); used > 1<<20 {
		t.Errorf("after erase_devices the disk file uses %d bytes of blocks", used)
	}
}

// allocated is the bytes of blocks a file uses.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatalf("no Stat_t for %s", path)
	}
	return st.Blocks * 512
}

func mustOpen(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func TestAPI(t *testing.T) {
	h := start(t, nil)
	ctx := t.Context()
	cb := h.agent.URL()
	// A command without the token: 401.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, cb+"/v1/commands/?wait=true", strings.NewReader(`{"name": "standby.sync", "params": {}}`))
	resp, err := httplimit.NewClient(httplimit.ClientOptions{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("POST /v1/commands/ without the token: %d", resp.StatusCode)
	}
	if st, _, err := h.ironic.Command(ctx, cb, "nope.nothing", map[string]any{}, true); err != nil || st != http.StatusBadRequest {
		t.Fatalf("unknown command: %d %v", st, err)
	}
	// A command while one runs: 409. A write_image of an image that never
	// ends keeps one running.
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(block) })
	if st, res, err := h.ironic.Command(ctx, cb, "deploy.execute_deploy_step", map[string]any{
		"step": map[string]any{"step": "write_image", "interface": "deploy", "args": writeImageArgs(srv.URL+"/slow", []byte("x"), "")},
		"node": map[string]any{}, "ports": []any{},
	}, false); err != nil || st != 200 || res.CommandStatus != "RUNNING" {
		t.Fatalf("write_image: %d %+v %v", st, res, err)
	}
	if st, _, err := h.ironic.Command(ctx, cb, "standby.sync", map[string]any{}, true); err != nil || st != http.StatusConflict {
		t.Fatalf("a command while write_image runs: %d %v, want 409", st, err)
	}
}

// TestNoHeartbeatFault: beside an agent that heartbeats, one told not to
// looks its node up and never heartbeats.
func TestNoHeartbeatFault(t *testing.T) {
	h := start(t, nil)
	faulty, err := ipaagent.Start(t.Context(), ipaagent.Config{
		APIURL: h.ironic.URL, MACs: []string{mac}, Disks: h.disks, NoHeartbeat: true,
		LookupInterval: 50 * time.Millisecond, HeartbeatInterval: 20 * time.Millisecond, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(faulty.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for (faulty.Heartbeating() || len(h.ironic.Heartbeats()) < 3) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if faulty.Node() != h.ironic.Node || faulty.Heartbeating() {
		t.Fatalf("the faulty agent looked up %q (want %q), still heartbeating %v", faulty.Node(), h.ironic.Node, faulty.Heartbeating())
	}
	for _, b := range h.ironic.Heartbeats() {
		if b.CallbackURL == faulty.URL() {
			t.Fatalf("heartbeat %+v from the agent told not to", b)
		}
	}
}

// TestSlowLookup: Ironic hands the agent token out once, to the lookup it
// answers first, even when the answer comes after httplimit's default
// timeout (30 s). The agent's default client waits for that answer: it
// ends with the token and heartbeats. A client that gave up would have
// looked up again and got the token masked, and every heartbeat refused.
func TestSlowLookup(t *testing.T) {
	t.Parallel()
	ironic := ipaagenttest.New(t, mac)
	ironic.TokenOnce()
	release := make(chan struct{})
	ironic.HoldLookups(release)
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the double's server closes: it waits for held lookups
	a, err := ipaagent.Start(t.Context(), ipaagent.Config{
		APIURL: ironic.URL, MACs: []string{mac}, Disks: []ipaagent.Disk{{Name: "sda", Path: filepath.Join(t.TempDir(), "sda.img"), Size: 4 << 30}},
		LookupInterval: 50 * time.Millisecond, HeartbeatInterval: 100 * time.Millisecond, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	// The answer comes later than the old default's 30 s.
	select {
	case <-time.After(httplimit.DefaultTimeout + 2*time.Second):
	case <-t.Context().Done():
	}
	free()
	hb := ironic.WaitHeartbeat(t, 10*time.Second)
	if hb.Token != ironic.Token || hb.CallbackURL != a.URL() {
		t.Fatalf("heartbeat with token %t, callback %s (agent at %s)", hb.Token == ironic.Token, hb.CallbackURL, a.URL())
	}
	if answered, abandoned := ironic.Lookups(); answered != 1 || abandoned != 0 {
		t.Errorf("%d lookups answered, %d of them given up by the agent; want one, waited for", answered, abandoned)
	}
	if refused := ironic.Refused(); len(refused) != 0 {
		t.Errorf("heartbeats refused: %v", refused)
	}
}

// TestMaskedToken: an agent whose lookup got the token masked (Ironic
// handed it out before) says why its heartbeats will be refused, and its
// API still refuses a command without a token.
func TestMaskedToken(t *testing.T) {
	ironic := ipaagenttest.New(t, mac)
	ironic.TokenOnce()
	disks := []ipaagent.Disk{{Name: "sda", Path: filepath.Join(t.TempDir(), "sda.img"), Size: 4 << 30}}
	first, err := ipaagent.Start(t.Context(), ipaagent.Config{
		APIURL: ironic.URL, MACs: []string{mac}, Disks: disks,
		LookupInterval: 50 * time.Millisecond, HeartbeatInterval: 100 * time.Millisecond, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.Stop)
	ironic.WaitHeartbeat(t, 10*time.Second)

	var mu sync.Mutex
	var logged []string
	second, err := ipaagent.Start(t.Context(), ipaagent.Config{
		APIURL: ironic.URL, MACs: []string{mac}, Disks: disks,
		LookupInterval: 50 * time.Millisecond, HeartbeatInterval: 100 * time.Millisecond,
		Logf: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			logged = append(logged, fmt.Sprintf(format, args...))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for len(ironic.Refused()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if refused := ironic.Refused(); len(refused) == 0 || refused[0] != "Invalid or missing agent token received." {
		t.Fatalf("heartbeats refused: %v, want the second agent's, for its token", refused)
	}
	mu.Lock()
	log := strings.Join(logged, "\n")
	mu.Unlock()
	if !strings.Contains(log, "agent token out before") || strings.Contains(log, ironic.Token) {
		t.Errorf("the log does not say why heartbeats are refused, or holds the token:\n%s", log)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, second.URL()+"/v1/commands/?wait=true", strings.NewReader(`{"name": "standby.sync", "params": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httplimit.NewClient(httplimit.ClientOptions{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a command without a token: %s, want 401", resp.Status)
	}
}
