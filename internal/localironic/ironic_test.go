package localironic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// TestMain lets the test binary play `airshipctl ironic serve-http`, the
// background image server Up starts when images are not served in process.
func TestMain(m *testing.M) {
	if len(os.Args) == 7 && os.Args[1] == "ironic" && os.Args[2] == "serve-http" && os.Args[3] == "--root" && os.Args[5] == "--listen" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if err := ServeImages(ctx, os.Args[4], os.Args[6]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var testClient = httplimit.NewClient(httplimit.ClientOptions{Timeout: 30 * time.Second, MaxResponseBytes: 8 << 20})

// requireIronic fails the test when Ironic is missing and
// AIRSHIP_REQUIRE_TESTBIN is set, and skips it otherwise.
func requireIronic(t *testing.T) {
	t.Helper()
	for _, bin := range []string{DefaultIronicBinary, DefaultDBSyncBinary} {
		if _, err := os.Stat(bin); err != nil {
			testtool.Missing(t, "%s is not installed; %s", bin, testtool.SetupHint)
		}
	}
}

// call sends one request to Ironic's API and decodes the JSON answer.
func call(t *testing.T, method, url string, creds *Credentials, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.82")
	req.Header.Set("Content-Type", "application/json")
	if creds != nil {
		req.SetBasicAuth(creds.Username, creds.Password)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }() // read in full below
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	_ = json.Unmarshal(data, &v) // error answers need not be JSON
	return resp.StatusCode, v
}

// waitProcessGone polls /proc until pid is gone or a zombie, or fails.
func waitProcessGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(data, ')'); i > 0 && i+2 < len(data) && (data[i+2] == 'Z' || data[i+2] == 'X') {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ironicPID(t *testing.T, stateDir string) int {
	t.Helper()
	st, err := GetStatus(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Processes {
		if p.Component == ComponentIronic && p.Alive {
			return p.PID
		}
	}
	t.Fatalf("no live Ironic recorded in %s: %+v", stateDir, st)
	return 0
}

func TestUpDownKeepsNodes(t *testing.T) {
	requireIronic(t)
	ctx := t.Context()
	state := t.TempDir()
	var progress strings.Builder
	inst, err := Up(ctx, Options{StateDir: state, ServeImagesInProcess: true, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	if !strings.HasPrefix(inst.APIURL, "http://127.0.0.1:") || !strings.HasPrefix(inst.HTTPURL, "http://127.0.0.1:") {
		t.Errorf("URLs %s %s", inst.APIURL, inst.HTTPURL)
	}
	if !strings.Contains(progress.String(), "Ironic is up") {
		t.Errorf("progress: %s", progress.String())
	}

	code, root := call(t, http.MethodGet, inst.APIURL+"/", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET /: %d", code)
	}
	if v := root["default_version"].(map[string]any)["version"]; v != "1.82" {
		t.Errorf("max API version %v, want 1.82", v)
	}
	node := map[string]any{
		"name": "host-0", "driver": "redfish",
		"driver_info":   map[string]any{"redfish_address": "http://127.0.0.1:1", "redfish_system_id": "/redfish/v1/Systems/1", "deploy_iso": inst.DeployISOURL},
		"instance_info": map[string]any{"image_source": inst.HTTPURL + "/image.qcow2", "image_checksum": "0123456789abcdef0123456789abcdef"},
	}
	if code, v := call(t, http.MethodPost, inst.APIURL+"/v1/nodes", nil, node); code != http.StatusCreated {
		t.Fatalf("POST /v1/nodes: %d %v", code, v)
	}
	checkNode(t, inst.APIURL, nil)
	// The configuration lets Ironic boot the deploy ISO over virtual media
	// and deploy with the agent.
	code, validate := call(t, http.MethodGet, inst.APIURL+"/v1/nodes/host-0/validate", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("validate: %d %v", code, validate)
	}
	for _, iface := range []string{"boot", "deploy", "power", "management", "inspect", "network"} {
		if r, _ := validate[iface].(map[string]any); r["result"] != true {
			t.Errorf("%s interface does not validate: %v", iface, validate[iface])
		}
	}

	// The deploy ISO is served and names this API.
	checkDeployISO(t, inst)

	// Up again: the running one, same process.
	pid := ironicPID(t, state)
	again, err := Up(ctx, Options{StateDir: state, ServeImagesInProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.APIURL != inst.APIURL || !again.Resumed || ironicPID(t, state) != pid {
		t.Errorf("second Up started another Ironic: %s pid %d", again.APIURL, ironicPID(t, state))
	}

	// Its image server gone (the process that ran it ended), Up restarts
	// it on its port.
	if err := inst.images.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	inst.images = nil
	again, err = Up(ctx, Options{StateDir: state, ServeImagesInProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Resumed || again.images == nil || again.DeployISOURL != inst.DeployISOURL {
		t.Errorf("Up did not restart the image server: resumed %v, %s", again.Resumed, again.DeployISOURL)
	}
	checkDeployISO(t, again)

	// Stop: the in-process image server, then Down.
	if err := again.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitProcessGone(t, pid)
	if st, err := GetStatus(state); err != nil || st.Running || !st.Recorded || len(st.Processes) != 0 {
		t.Errorf("status after down: %+v %v", st, err)
	}
	for _, f := range []string{DatabaseFileName, LogFileName, ConfigFileName} {
		if _, err := os.Stat(filepath.Join(state, f)); err != nil {
			t.Errorf("down removed %s: %v", f, err)
		}
	}
	if err := Down(ctx, state); err != nil {
		t.Errorf("a second Down: %v", err)
	}

	// Up again on the same directory: same URLs (nodes name the deploy
	// ISO's), and the node is still there.
	restarted, err := Up(ctx, Options{StateDir: state, ServeImagesInProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = restarted.Stop(context.Background()) })
	if restarted.APIURL != inst.APIURL || restarted.DeployISOURL != inst.DeployISOURL || restarted.Resumed {
		t.Errorf("restart: API %s → %s, deploy ISO %s → %s, resumed %v", inst.APIURL, restarted.APIURL, inst.DeployISOURL, restarted.DeployISOURL, restarted.Resumed)
	}
	checkNode(t, restarted.APIURL, nil)
	newPID := ironicPID(t, state)
	if err := restarted.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitProcessGone(t, newPID)
}

func checkNode(t *testing.T, apiURL string, creds *Credentials) {
	t.Helper()
	code, v := call(t, http.MethodGet, apiURL+"/v1/nodes/host-0", creds, nil)
	if code != http.StatusOK {
		t.Fatalf("GET node: %d %v", code, v)
	}
	if v["driver"] != "redfish" || v["provision_state"] != "enroll" || v["deploy_interface"] != "direct" || v["boot_interface"] != "redfish-virtual-media" {
		t.Errorf("node %v", v)
	}
}

func checkDeployISO(t *testing.T, inst *Instance) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, inst.DeployISOURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }() // read in full below
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", inst.DeployISOURL, resp.StatusCode, err)
	}
	iso := filepath.Join(t.TempDir(), "fetched.iso")
	if err := os.WriteFile(iso, data, 0o600); err != nil {
		t.Fatal(err)
	}
	params, err := ReadDeployISOKernelParams(iso)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(params, APIURLParam+"="+inst.APIURL+" ") {
		t.Errorf("deploy ISO kernel params %q do not name %s", params, inst.APIURL)
	}
}

// http_basic, with the image server in a background process.
func TestHTTPBasicAndBackgroundImageServer(t *testing.T) {
	requireIronic(t)
	ctx := t.Context()
	state := t.TempDir()
	inst, err := Up(ctx, Options{StateDir: state, Auth: AuthHTTPBasic, ImageServerCommand: []string{os.Args[0], "ironic", "serve-http"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	if code, _ := call(t, http.MethodGet, inst.APIURL+"/v1/nodes", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("unauthenticated GET /v1/nodes: %d, want 401", code)
	}
	creds, err := ReadCredentials(inst.CredentialsFile)
	if err != nil {
		t.Fatal(err)
	}
	if code, v := call(t, http.MethodGet, inst.APIURL+"/v1/nodes", &creds, nil); code != http.StatusOK {
		t.Errorf("GET /v1/nodes with credentials: %d %v", code, v)
	}
	bad := Credentials{Username: creds.Username, Password: "wrong"}
	if code, _ := call(t, http.MethodGet, inst.APIURL+"/v1/nodes", &bad, nil); code != http.StatusUnauthorized {
		t.Errorf("GET /v1/nodes with a wrong password: %d, want 401", code)
	}
	// The agent's endpoints stay public.
	if code, _ := call(t, http.MethodGet, inst.APIURL+"/v1/lookup?addresses=52:54:00:00:00:01", nil, nil); code == http.StatusUnauthorized {
		t.Error("lookup needs credentials; the deploy agent has none")
	}
	for _, f := range []string{ConfigFileName, CredentialsFileName, HTPasswdFileName, DatabaseFileName, StateFileName} {
		fi, err := os.Stat(filepath.Join(state, f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	checkNoSecret(t, state, creds.Password)

	st, err := GetStatus(state)
	if err != nil {
		t.Fatal(err)
	}
	var imagePID int
	for _, p := range st.Processes {
		if p.Component == ComponentImageServer && p.Alive {
			imagePID = p.PID
		}
	}
	if imagePID == 0 {
		t.Fatalf("no background image server recorded: %+v", st.Processes)
	}
	checkDeployISO(t, inst)
	ironic := ironicPID(t, state)
	if err := inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitProcessGone(t, imagePID)
	waitProcessGone(t, ironic)
}

// checkNoSecret fails when the password is in a file of the state
// directory other than the credentials file.
func checkNoSecret(t *testing.T, state, password string) {
	t.Helper()
	err := filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(path) == CredentialsFileName {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(password)) {
			t.Errorf("%s holds the password", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUpRefusesNoAuthOffLoopback(t *testing.T) {
	state := t.TempDir()
	_, err := Up(t.Context(), Options{StateDir: state, Host: "0.0.0.0"})
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("err = %v", err)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("Up wrote %v before refusing", entries)
	}
}

func TestUpWithoutIronicNamesSetup(t *testing.T) {
	_, err := Up(t.Context(), Options{StateDir: t.TempDir(), IronicBinary: filepath.Join(t.TempDir(), "ironic")})
	if err == nil || !strings.Contains(err.Error(), "hack/setup.sh") {
		t.Fatalf("err = %v", err)
	}
}

func TestDownAndStatusOfEmptyDir(t *testing.T) {
	state := t.TempDir()
	if err := Down(t.Context(), state); err != nil {
		t.Fatal(err)
	}
	st, err := GetStatus(state)
	if err != nil || st.Recorded || st.Running {
		t.Fatalf("%+v %v", st, err)
	}
}

// Every option ironic.conf sets is declared where Ironic (or the library
// that owns its section) declares the options of that section.
func TestConfigOptionsKnownToIronic(t *testing.T) {
	requireIronic(t)
	const py = "/usr/lib/python3/dist-packages/"
	modules := map[string][]string{
		"DEFAULT":          {"ironic/conf/default.py", "oslo_log/_options.py"},
		"api":              {"ironic/conf/api.py"},
		"json_rpc":         {"ironic_lib/json_rpc/__init__.py", "keystoneauth1/loading/conf.py", "keystoneauth1/loading/_plugins/http_basic.py"},
		"database":         {"oslo_db/options.py"},
		"conductor":        {"ironic/conf/conductor.py"},
		"deploy":           {"ironic/conf/deploy.py"},
		"agent":            {"ironic/conf/agent.py"},
		"dhcp":             {"ironic/conf/dhcp.py"},
		"redfish":          {"ironic/conf/redfish.py"},
		"pxe":              {"ironic/conf/pxe.py"},
		"service_catalog":  {"keystoneauth1/loading/adapter.py"},
		"oslo_concurrency": {"oslo_concurrency/lockutils.py"},
	}
	in := goldenInput(func(o *Options) { o.Auth = AuthHTTPBasic; o.FakeHardware = true; o.Tuning.Conductors = 2 })
	in.conductors, in.rpcPort, in.rpc = []string{"127.0.0.1", "127.0.0.2"}, 6388, rpcCredentials{user: rpcUser, password: "p"}
	conf, err := renderConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	section, checked := "", 0
	for _, line := range strings.Split(conf, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[]")
			if _, ok := modules[section]; !ok {
				t.Errorf("section [%s] has no known module", section)
			}
			continue
		}
		key, _, ok := strings.Cut(line, " = ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		found := false
		for _, m := range modules[section] {
			src, err := os.ReadFile(py + m)
			if err != nil {
				t.Fatal(err)
			}
			re := regexp.MustCompile(`Opt\(\s*'(` + regexp.QuoteMeta(key) + `|` + regexp.QuoteMeta(strings.ReplaceAll(key, "_", "-")) + `)'`)
			found = found || re.Match(src)
		}
		if !found {
			t.Errorf("[%s] %s is declared in none of %v", section, key, modules[section])
		}
		checked++
	}
	if checked < 50 {
		t.Errorf("checked only %d options", checked)
	}
}

func TestSchemaCache(t *testing.T) {
	requireIronic(t)
	ctx := t.Context()
	cache := filepath.Join(t.TempDir(), "cache")
	o := Options{SchemaCacheDir: cache}.withDefaults()
	version, err := IronicVersion(ctx, o.DBSyncBinary)
	if err != nil {
		t.Fatal(err)
	}
	first := paths{root: t.TempDir()}
	if err := os.MkdirAll(first.tmp(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := ensureDatabase(ctx, o, first); err != nil {
		t.Fatal(err)
	}
	cached := schemaCacheFile(cache, version)
	fi, err := os.Stat(cached)
	if err != nil {
		t.Fatalf("no cached schema: %v", err)
	}
	checkSchema(t, first.database())
	// WAL: the file's format versions (header bytes 18 and 19) say so.
	if h := sqliteHeader(t, first.database()); h[18] != 1 || h[19] != 1 {
		t.Fatalf("a new database is in WAL mode already (%v)", h[18:20])
	}
	if err := enableWAL(ctx, first.database()); err != nil {
		t.Fatal(err)
	}
	if h := sqliteHeader(t, first.database()); h[18] != 2 || h[19] != 2 {
		t.Errorf("database not in WAL mode after enableWAL: format versions %v", h[18:20])
	}
	checkSchema(t, first.database())
	if err := enableWAL(ctx, first.database()); err != nil {
		t.Errorf("enableWAL twice: %v", err)
	}

	// A second directory copies the cache: the cached file is untouched.
	second := paths{root: t.TempDir()}
	if err := ensureDatabase(ctx, o, second); err != nil {
		t.Fatal(err)
	}
	fi2, err := os.Stat(cached)
	if err != nil || !os.SameFile(fi, fi2) || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("the cached schema was rewritten")
	}
	checkSchema(t, second.database())

	// An existing database is kept (a restart keeps its nodes).
	if err := os.WriteFile(second.database(), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ensureDatabase(ctx, o, second); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(second.database()); string(data) != "kept" {
		t.Error("ensureDatabase replaced an existing database")
	}

	// No usable cache directory: the schema is made in place.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	third := paths{root: t.TempDir()}
	if err := os.MkdirAll(third.tmp(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := ensureDatabase(ctx, Options{SchemaCacheDir: filepath.Join(blocker, "cache")}.withDefaults(), third); err != nil {
		t.Fatal(err)
	}
	checkSchema(t, third.database())
}

// checkSchema checks path is a 0600 sqlite database of Ironic's size.
func checkSchema(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("SQLite format 3\x00")) || !bytes.Contains(data, []byte("CREATE TABLE nodes")) {
		t.Errorf("%s is not Ironic's schema (%d bytes)", path, len(data))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s mode: %v %v", path, fi.Mode().Perm(), err)
	}
}

// sqliteHeader is the first 100 bytes of an sqlite database.
func sqliteHeader(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	h := make([]byte, 100)
	if _, err := io.ReadFull(f, h); err != nil {
		t.Fatal(err)
	}
	return h
}

// A port Up chose that another program takes before Ironic binds it: Up
// starts again on other ports instead of failing.
func TestUpStartsAgainWhenAPortIsTaken(t *testing.T) {
	requireIronic(t)
	var taken []net.Listener
	testHookBeforeIronic = func(st *State) {
		if len(taken) > 0 {
			return
		}
		ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", net.JoinHostPort(st.Host, strconv.Itoa(st.APIPort)))
		if err != nil {
			t.Errorf("taking the API port: %v", err)
			return
		}
		taken = append(taken, ln)
	}
	t.Cleanup(func() {
		testHookBeforeIronic = nil
		for _, ln := range taken {
			_ = ln.Close()
		}
	})
	var progress bytes.Buffer
	inst, err := Up(t.Context(), Options{StateDir: t.TempDir(), ServeImagesInProcess: true, StopWithCaller: true, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	if len(taken) != 1 {
		t.Fatalf("the hook took %d ports", len(taken))
	}
	if inst.APIURL == "http://"+taken[0].Addr().String() {
		t.Errorf("Ironic's API is on the taken port %s", inst.APIURL)
	}
	if !strings.Contains(progress.String(), "starting again on other ports") {
		t.Errorf("progress does not say Up started again:\n%s", progress.String())
	}
	if code, _ := call(t, http.MethodGet, inst.APIURL+"/v1/nodes", nil, nil); code != http.StatusOK {
		t.Errorf("GET /v1/nodes: %d", code)
	}
}

// With Tuning.Conductors 2 an ironic-conductor joins the all-in-one
// process: nodes are spread over both, the API drives a node of the
// second through JSON-RPC, JSON-RPC refuses a caller without the
// generated credentials, and Down stops both.
func TestConductorsShareNodes(t *testing.T) {
	requireIronic(t)
	if _, err := os.Stat(DefaultConductorBinary); err != nil {
		testtool.Missing(t, "%s is not installed; %s", DefaultConductorBinary, testtool.SetupHint)
	}
	state := t.TempDir()
	inst, err := Up(t.Context(), Options{StateDir: state, ServeImagesInProcess: true, StopWithCaller: true, FakeHardware: true, Tuning: Tuning{Conductors: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	st, err := GetStatus(state)
	if err != nil {
		t.Fatal(err)
	}
	var second int
	for _, p := range st.Processes {
		if p.Component == ComponentConductor+"2" && p.Alive {
			second = p.PID
		}
	}
	if second == 0 {
		t.Fatalf("no live second conductor recorded: %+v", st.Processes)
	}
	code, body := call(t, http.MethodGet, inst.APIURL+"/v1/conductors", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET /v1/conductors: %d %v", code, body)
	}
	alive := map[string]bool{}
	for _, c := range body["conductors"].([]any) {
		m := c.(map[string]any)
		alive[m["hostname"].(string)] = m["alive"].(bool)
	}
	if !alive["127.0.0.1"] || !alive["127.0.0.2"] {
		t.Fatalf("conductors = %v, want 127.0.0.1 and 127.0.0.2 alive", alive)
	}
	// 16 nodes: all on one conductor of two by chance is 2 in 65,536.
	byConductor := map[string][]string{}
	for i := range 16 {
		code, node := call(t, http.MethodPost, inst.APIURL+"/v1/nodes", nil, map[string]any{"name": fmt.Sprintf("n%d", i), "driver": "fake-hardware"})
		if code != http.StatusCreated {
			t.Fatalf("creating node %d: %d %v", i, code, node)
		}
		_, node = call(t, http.MethodGet, inst.APIURL+"/v1/nodes/"+node["uuid"].(string)+"?fields=uuid,conductor", nil, nil)
		c, _ := node["conductor"].(string)
		byConductor[c] = append(byConductor[c], node["uuid"].(string))
	}
	if len(byConductor["127.0.0.1"]) == 0 || len(byConductor["127.0.0.2"]) == 0 {
		t.Fatalf("nodes by conductor: %v", byConductor)
	}
	// A node of the second conductor, taken to manageable: a request the
	// API hands to that conductor over JSON-RPC.
	uuid := byConductor["127.0.0.2"][0]
	if code, body := call(t, http.MethodPut, inst.APIURL+"/v1/nodes/"+uuid+"/states/provision", nil, map[string]any{"target": "manage"}); code != http.StatusAccepted {
		t.Fatalf("manage: %d %v", code, body)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, node := call(t, http.MethodGet, inst.APIURL+"/v1/nodes/"+uuid+"?fields=provision_state,last_error", nil, nil)
		if node["provision_state"] == "manageable" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s: %v", uuid, node)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// JSON-RPC without credentials is refused.
	rpc := fmt.Sprintf("http://127.0.0.2:%d/", readRPCPort(t, state))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, rpc, strings.NewReader(`{"jsonrpc":"2.0","method":"get_conductor_info","params":{},"id":"1"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("JSON-RPC without credentials: %s, want 401", resp.Status)
	}
	opts := Options{StateDir: state, ServeImagesInProcess: true, StopWithCaller: true, FakeHardware: true, Tuning: Tuning{Conductors: 2}}
	// Another conductor count is refused while these run.
	one := opts
	one.Tuning.Conductors = 1
	if _, err := Up(t.Context(), one); err == nil || !strings.Contains(err.Error(), "runs 2 conductors, not 1") {
		t.Errorf("Up with one conductor while two run: %v", err)
	}
	// The second conductor killed: Up starts them all again, the nodes kept.
	if err := syscall.Kill(second, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitProcessGone(t, second)
	if err := inst.Stop(t.Context()); err != nil { // the image server of this process
		t.Fatal(err)
	}
	again, err := Up(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = again.Stop(context.Background()) })
	if again.Resumed {
		t.Error("Up resumed an Ironic whose conductor was gone")
	}
	if code, node := call(t, http.MethodGet, again.APIURL+"/v1/nodes/"+uuid+"?fields=provision_state", nil, nil); code != http.StatusOK || node["provision_state"] != "manageable" {
		t.Errorf("node %s after the restart: %d %v", uuid, code, node)
	}
	if err := again.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, err = GetStatus(state)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Processes) != 0 {
		t.Errorf("after Stop: %+v", st.Processes)
	}
}

func readRPCPort(t *testing.T, stateDir string) int {
	t.Helper()
	st, err := readState(paths{root: stateDir}.state())
	if err != nil || st == nil || st.RPCPort == 0 {
		t.Fatalf("state of %s: %+v %v", stateDir, st, err)
	}
	return st.RPCPort
}
