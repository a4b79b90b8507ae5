package haproxy

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/airshipit/airship-go/internal/image"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

const testCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

// deadline only fails a test that would otherwise hang.
const deadline = time.Minute

// extract writes the layers of img, in order, into dir: the image has
// only directories and regular files.
func extract(t *testing.T, img v1.Image, dir string) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, filepath.FromSlash(h.Name))
			switch h.Typeflag {
			case tar.TypeDir:
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
				err = os.Chmod(p, os.FileMode(h.Mode&0o777)|modeBits(h.Mode))
			case tar.TypeReg:
				var data []byte
				if data, err = io.ReadAll(tr); err == nil {
					err = os.WriteFile(p, data, os.FileMode(h.Mode&0o777))
				}
			default:
				t.Fatalf("%s: unexpected entry type %c", h.Name, h.Typeflag)
			}
			if err == nil {
				err = os.Chown(p, h.Uid, h.Gid)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		_ = rc.Close() // only read
	}
}

func modeBits(m int64) os.FileMode {
	if m&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// TestImageRunsHAProxy builds the image of the installed HAProxy, checks
// its config, extracts its layers and, chrooted there as uid 99 (so
// nothing but /tmp and the home directory is writable, close to the pods'
// read-only root), checks a configuration with it and runs the image's
// entrypoint on that configuration, proxying a loopback port to a test
// listener: only a complete set of libraries runs.
func TestImageRunsHAProxy(t *testing.T) {
	_, err := os.Stat(Binary)
	if err != nil {
		testtool.Missing(t, "%s is not installed: %v; %s", Binary, err, testtool.SetupHint)
	}
	if os.Geteuid() != 0 {
		testtool.Missing(t, "chroot needs root")
	}
	spec, err := Spec(t.Context(), image.Spec{CACertificates: []byte(testCA), Source: "https://example.invalid/src", Revision: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := image.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	img, err := image.Platform(idx, Platform)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	version, err := exec.CommandContext(t.Context(), "dpkg-query", "-W", "-f=${Version}", Package).Output()
	if err != nil {
		t.Fatal(err)
	}
	wantEntry := []string{Binary, "-W", "-db", "-f", ConfigPath}
	if cf.Config.User != "99:99" || !slices.Equal(cf.Config.Entrypoint, wantEntry) || len(cf.Config.Cmd) != 0 ||
		cf.Config.Labels["org.opencontainers.image.version"] != string(version) || cf.Config.Labels[PackageLabel] != "haproxy="+string(version) {
		t.Errorf("config: user %q entrypoint %q cmd %q labels %v", cf.Config.User, cf.Config.Entrypoint, cf.Config.Cmd, cf.Config.Labels)
	}

	root := t.TempDir()
	extract(t, img, root)
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if err != nil || !strings.Contains(string(passwd), "haproxy:x:99:99:") {
		t.Errorf("/etc/passwd: %q %v", passwd, err)
	}
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(ConfigPath)), 0o755); err != nil {
		t.Fatal(err)
	}
	// Every container runtime gives a container /dev/null, which the
	// worker opens: so does the test.
	if err := os.Mkdir(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = syscall.Mknod(filepath.Join(root, "dev/null"), syscall.S_IFCHR|0o666, 1<<8|3)
	if err != nil {
		testtool.Missing(t, "making /dev/null in the chroot: %v", err)
	}
	if err := os.Chmod(filepath.Join(root, "dev/null"), 0o666); err != nil {
		t.Fatal(err)
	}
	backend, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = backend.Close() }() // the test is over
	go func() {
		for {
			c, err := backend.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello from the backend\n")) // the client checks what it got
			_ = c.Close()
		}
	}()
	front := freeAddr(t)
	cfg := fmt.Sprintf(`global
  log stdout format raw local0 info
defaults
  mode tcp
  log global
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend f
  bind %s
  default_backend b
backend b
  server s %s
`, front, backend.Addr())
	if err := os.WriteFile(filepath.Join(root, ConfigPath), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	chrooted := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(t.Context(), args[0], args[1:]...)
		cmd.Dir = "/"
		cmd.Env = cf.Config.Env
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: UID, Gid: UID}}
		return cmd
	}
	out, err := chrooted(Binary, "-c", "-f", ConfigPath).CombinedOutput()
	if errors.Is(err, syscall.EPERM) {
		testtool.Missing(t, "chroot is not permitted here: %v", err)
	}
	if err != nil {
		t.Fatalf("haproxy -c in the image: %v\n%s", err, out)
	}

	run := chrooted(cf.Config.Entrypoint...)
	var logs syncBuffer
	run.Stdout, run.Stderr = &logs, &logs
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	defer func() {
		if run.ProcessState == nil {
			_ = run.Process.Kill() // a failed test's haproxy
			if err := <-exited; err != nil {
				t.Logf("haproxy after kill: %v", err) // killed: an error is expected
			}
		}
	}()
	var got string
	end := time.Now().Add(deadline)
	for got != "hello from the backend\n" {
		select {
		case err := <-exited:
			t.Fatalf("haproxy exited (%v) before answering on %s; its output:\n%s", err, front, logs.String())
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("no answer through haproxy on %s within %s: got %q; its output:\n%s", front, deadline, got, logs.String())
		}
		got = dialOnce(t, front)
		if got == "" {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := run.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-exited:
	case <-time.After(deadline):
		t.Fatalf("haproxy still running %s after SIGTERM; its output:\n%s", deadline, logs.String())
	}
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("haproxy after SIGTERM: %v\n%s", err, logs.String())
		}
		// Normally the master exits with the status of its worker, stopped
		// by the signal. A SIGTERM that lands just after the worker is ready
		// but before the master has set its handlers ends the master by the
		// signal itself: a stop too. Any other signal is a crash.
		if ws := exit.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() && ws.Signal() != syscall.SIGTERM {
			t.Errorf("haproxy crashed after SIGTERM: %v\n%s", err, logs.String())
		}
	}
}

// freeAddr is a loopback address with a port free a moment ago, for
// haproxy's frontend. (testenv.FreeAddr does the same, but testenv would
// bring the whole cluster tree into this small package's test.)
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }() // only probed for its port
	return l.Addr().String()
}

// dialOnce connects to addr and reads what it says, "" if it cannot.
func dialOnce(t *testing.T, addr string) string {
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(t.Context(), "tcp", addr)
	if err != nil {
		return ""
	}
	defer func() { _ = c.Close() }() // only read
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	b, _ := io.ReadAll(io.LimitReader(c, 1<<10))
	return string(b)
}

// syncBuffer collects a process's output while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
