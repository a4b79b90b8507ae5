package localironic

import (
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	diskfs "github.com/diskfs/go-diskfs"
	"golang.org/x/crypto/bcrypt"
)

var update = flag.Bool("update", false, "rewrite testdata/ironic.conf.golden")

// goldenInput is a fixed configuration: state directory /STATE, API port
// 6385, image server port 8080.
func goldenInput(mut func(*Options)) confInput {
	o := Options{StateDir: "/STATE"}
	if mut != nil {
		mut(&o)
	}
	o = o.withDefaults()
	return confInput{
		opts: o, paths: paths{root: "/STATE"}, apiURL: "http://127.0.0.1:6385", httpURL: "http://127.0.0.1:8080",
		apiPort: 6385, httpFile: "/STATE/htpasswd",
	}
}

func TestConfigGolden(t *testing.T) {
	got, err := renderConfig(goldenInput(nil))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "ironic.conf.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("ironic.conf differs from %s (go test -run TestConfigGolden -update to rewrite):\n%s", golden, got)
	}
}

func TestConfigVariants(t *testing.T) {
	tests := []struct {
		name    string
		mut     func(*Options)
		want    []string
		notWant []string
	}{
		{"http_basic names the user file", func(o *Options) { o.Auth = AuthHTTPBasic },
			[]string{"auth_strategy = http_basic\n", "http_basic_auth_user_file = /STATE/htpasswd\n"}, []string{"noauth"}},
		{"fake hardware adds fake interfaces", func(o *Options) { o.FakeHardware = true },
			[]string{"enabled_hardware_types = redfish,fake-hardware\n", "enabled_deploy_interfaces = direct,ramdisk,custom-agent,fake\n", "enabled_power_interfaces = redfish,fake\n"}, nil},
		{"tuning is written in seconds", func(o *Options) {
			o.Tuning = Tuning{ConductorWorkers: 300, SyncPowerStateInterval: -1, DeployCallbackTimeout: 90*time.Second + time.Millisecond, APIMaxLimit: 5000}
		}, []string{"workers_pool_size = 300\n", "sync_power_state_interval = 0\n", "deploy_callback_timeout = 91\n", "max_limit = 5000\n"}, nil},
		{"debug", func(o *Options) { o.Debug = true }, []string{"debug = true\n"}, []string{"debug = false"}},
		{"one conductor: no RPC, the fixed name", nil,
			[]string{"rpc_transport = none\n", "host = airship-local\n"}, []string{"[json_rpc]", "json-rpc"}},
		{"three conductors: JSON-RPC with basic auth, named by address", func(o *Options) { o.Tuning.Conductors = 3 },
			[]string{"rpc_transport = json-rpc\n", "host = 127.0.0.1\n", "[json_rpc]\nhost_ip = 127.0.0.1\nport = 6388\nauth_strategy = http_basic\nhttp_basic_auth_user_file = /STATE/rpc-htpasswd\nauth_type = http_basic\nusername = airship-rpc\npassword = s3cret\n"},
			[]string{"airship-local"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := goldenInput(tt.mut)
			var err error
			if in.conductors, err = conductorAddrs(in.opts.Host, in.opts.Tuning.Conductors); err != nil {
				t.Fatal(err)
			}
			in.rpcPort, in.rpc = 6388, rpcCredentials{user: rpcUser, password: "s3cret"}
			got, err := renderConfig(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q", w)
				}
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"defaults", Options{StateDir: "/s"}, ""},
		{"four conductors on loopback", Options{StateDir: "/s", Tuning: Tuning{Conductors: 4}}, ""},
		{"http_basic on any address", Options{StateDir: "/s", Host: "192.0.2.1", Auth: AuthHTTPBasic}, ""},
		{"no state dir", Options{}, "StateDir is required"},
		{"noauth off loopback", Options{StateDir: "/s", Host: "192.0.2.1"}, "needs every listener on loopback"},
		{"noauth on all addresses", Options{StateDir: "/s", Host: "0.0.0.0", Auth: AuthNoAuth}, "needs every listener on loopback"},
		{"host not an IP", Options{StateDir: "/s", Host: "localhost"}, "not an IP address"},
		{"unknown auth", Options{StateDir: "/s", Auth: "keystone"}, `Auth "keystone"`},
		{"port out of range", Options{StateDir: "/s", APIPort: 70000}, "APIPort 70000 is out of range"},
		{"same ports", Options{StateDir: "/s", APIPort: 6385, HTTPPort: 6385}, "both 6385"},
		{"too few workers", Options{StateDir: "/s", Tuning: Tuning{ConductorWorkers: 2}}, "workers_pool_size is 2, below 3"},
		{"conductors on IPv6 loopback", Options{StateDir: "/s", Host: "::1", Tuning: Tuning{Conductors: 2}}, "need an IPv4 loopback Host"},
		{"conductors off loopback", Options{StateDir: "/s", Host: "192.0.2.1", Auth: AuthHTTPBasic, Tuning: Tuning{Conductors: 2}}, "need an IPv4 loopback Host"},
		{"conductors past the loopback range", Options{StateDir: "/s", Host: "127.255.255.254", Tuning: Tuning{Conductors: 3}}, "no loopback address left after 127.255.255.255"},
		{"negative timeout", Options{StateDir: "/s", Tuning: Tuning{DeployCallbackTimeout: -time.Second}}, "deploy_callback_timeout is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.withDefaults().validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestImageHandler(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "http")
	for name, content := range map[string]string{"image.raw": "raw bytes", "sub/deploy.iso": "iso"} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	// Ironic's converted images: absolute links from the root into
	// LinkedImagesDir are served; links elsewhere, or out of it with "..",
	// are not.
	images := LinkedImagesDir(root)
	for name, content := range map[string]string{"node-1/disk": "converted", "../images-other/disk": "sibling"} {
		p := filepath.Join(images, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"agent_images/node-1":  filepath.Join(images, "node-1", "disk"),
		"agent_images/sibling": filepath.Join(images, "..", "images-other", "disk"),
		"agent_images/dotdot":  images + "/../../../" + filepath.Base(outside) + "/secret",
		"agent_images/dir":     images,
	} {
		if err := os.MkdirAll(filepath.Join(root, "agent_images"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := ImageHandler(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path string
		wantCode     int
		wantBody     string
	}{
		{"GET", "/image.raw", 200, "raw bytes"},
		{"GET", "/sub/deploy.iso", 200, "iso"},
		{"HEAD", "/image.raw", 200, ""},
		{"GET", "/../image.raw", 400, ""},
		{"GET", "/sub/../image.raw", 400, ""},
		{"GET", "/sub/%2e%2e/image.raw", 400, ""},
		{"GET", "/", 400, ""},
		{"GET", "/sub", 404, ""},
		{"GET", "/sub/", 404, ""},
		{"GET", "/missing", 404, ""},
		{"GET", "/escape", 404, ""},
		{"GET", "/agent_images/node-1", 200, "converted"},
		{"HEAD", "/agent_images/node-1", 200, ""},
		{"GET", "/agent_images/sibling", 404, ""},
		{"GET", "/agent_images/dotdot", 404, ""},
		{"GET", "/agent_images/dir", 404, ""},
		{"GET", "/sub\\..\\image.raw", 400, ""},
		{"POST", "/image.raw", 405, ""},
		{"PUT", "/new", 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req := httptest.NewRequestWithContext(t.Context(), tt.method, "http://images"+tt.path, nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantCode {
				t.Fatalf("code %d, want %d (body %q)", rec.Code, tt.wantCode, rec.Body.String())
			}
			if tt.wantCode == 200 && rec.Body.String() != tt.wantBody {
				t.Errorf("body %q, want %q", rec.Body.String(), tt.wantBody)
			}
			if tt.wantCode != 200 && strings.Contains(rec.Body.String(), "outside") {
				t.Error("served a file outside the root")
			}
		})
	}
	if _, err := os.Stat(filepath.Join(root, "new")); err == nil {
		t.Error("PUT created a file")
	}
}

func TestDeployISORoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, DeployISOName)
	const api = "http://127.0.0.1:16385"
	if err := WriteDeployISO(path, api, dir); err != nil {
		t.Fatal(err)
	}
	params, err := ReadDeployISOKernelParams(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "ipa-api-url=http://127.0.0.1:16385 ipa-insecure=0 nofb nomodeset systemd.journald.forward_to_console=yes"
	if params != want {
		t.Errorf("kernel params %q, want %q", params, want)
	}
	cfg := readISOFile(t, path, GrubConfigPath)
	for _, line := range []string{"linux /vmlinuz " + want + "\n", "initrd /initramfs\n"} {
		if !strings.Contains(cfg, line) {
			t.Errorf("grub.cfg lacks %q:\n%s", line, cfg)
		}
	}
	for _, f := range []string{KernelPath, InitrdPath} {
		if readISOFile(t, path, f) == "" {
			t.Errorf("%s is empty", f)
		}
	}
	// Rewritten in place for another API (a restart on another port).
	if err := WriteDeployISO(path, "http://127.0.0.1:1", dir); err != nil {
		t.Fatal(err)
	}
	if params, err := ReadDeployISOKernelParams(path); err != nil || !strings.HasPrefix(params, "ipa-api-url=http://127.0.0.1:1 ") {
		t.Errorf("after rewrite: %q, %v", params, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("scratch files left: %v", entries)
	}
}

func TestCredentials(t *testing.T) {
	p := paths{root: t.TempDir()}
	if err := ensureCredentials(p); err != nil {
		t.Fatal(err)
	}
	c, err := ReadCredentials(p.credentials())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Username, "airship-") || len(c.Password) < 40 {
		t.Errorf("credentials %q / %d chars", c.Username, len(c.Password))
	}
	for _, f := range []string{p.credentials(), p.htpasswd()} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", f, fi.Mode().Perm())
		}
	}
	data, err := os.ReadFile(p.htpasswd())
	if err != nil {
		t.Fatal(err)
	}
	user, hash, _ := strings.Cut(strings.TrimSpace(string(data)), ":")
	if user != c.Username || bcrypt.CompareHashAndPassword([]byte(hash), []byte(c.Password)) != nil {
		t.Errorf("htpasswd %q does not match the credentials", data)
	}
	if strings.Contains(string(data), c.Password) {
		t.Error("htpasswd holds the password in clear")
	}
	// A second Up keeps them: clients hold them.
	if err := ensureCredentials(p); err != nil {
		t.Fatal(err)
	}
	if c2, err := ReadCredentials(p.credentials()); err != nil || c2 != c {
		t.Errorf("credentials changed: %v", err)
	}
}

func TestReadCredentialsErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, content, wantErr string }{
		{"no password", "username: u\n", "username and password are required"},
		{"empty", "", "username and password are required"},
		{"missing file", "", "reading Ironic credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if tt.name != "missing file" {
				if err := os.WriteFile(p, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := ReadCredentials(p)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

var _ http.Handler = (*imageHandler)(nil)

// readISOFile reads one file of an ISO image with go-diskfs's reader.
func readISOFile(t *testing.T, iso, name string) string {
	t.Helper()
	d, err := diskfs.Open(iso, diskfs.WithOpenMode(diskfs.ReadOnly))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	fs, err := d.GetFilesystem(0)
	if err != nil {
		t.Fatal(err)
	}
	data, err := fs.ReadFile(strings.TrimPrefix(name, "/"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return string(data)
}
