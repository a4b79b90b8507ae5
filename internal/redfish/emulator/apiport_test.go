package emulator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stmcginnis/gofish/schemas"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

func TestAPIForwardOf(t *testing.T) {
	ca := &pki.KeyPair{}
	ip := netip.MustParseAddr("10.23.0.1")
	for _, tc := range []struct {
		name    string
		boot    *kubeadmBoot
		nodeIP  string
		backend string // "": no forward
		why     string // a part of the reason, when a control-plane host gets none
	}{
		{name: "no bootstrap", nodeIP: "10.23.0.1"},
		{name: "kubeadm init", boot: &kubeadmBoot{endpoint: "https://10.0.0.10:6443"}, nodeIP: "10.23.0.1", backend: "10.0.0.10:6443"},
		{name: "a control-plane join carries the CA", boot: &kubeadmBoot{join: true, ca: ca, endpoint: "https://api.example:8443"}, nodeIP: "10.23.0.1", backend: "api.example:8443"},
		{name: "a worker's join", boot: &kubeadmBoot{join: true, endpoint: "https://10.0.0.10:6443"}, nodeIP: "10.23.0.1"},
		{name: "a worker's join without endpoint", boot: &kubeadmBoot{join: true}, nodeIP: "10.23.0.1"},
		{name: "init without endpoint", boot: &kubeadmBoot{}, nodeIP: "10.23.0.1", why: "names no API server"},
		{name: "no address", boot: &kubeadmBoot{endpoint: "https://10.0.0.10:6443"}, why: "no address"},
		{name: "the host's own port", boot: &kubeadmBoot{endpoint: "https://10.23.0.1:6443"}, nodeIP: "10.23.0.1", why: "own port"},
		{name: "the host's address, another port", boot: &kubeadmBoot{endpoint: "https://10.23.0.1:7443"}, nodeIP: "10.23.0.1", backend: "10.23.0.1:7443"},
		{name: "no port", boot: &kubeadmBoot{endpoint: "https://10.0.0.10"}, nodeIP: "10.23.0.1", why: "no port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, why := apiForwardOf(tc.boot, tc.nodeIP)
			switch {
			case tc.backend == "" && !f.none():
				t.Errorf("forward %+v, want none", f)
			case tc.backend != "" && (f.addr != ip || f.backend != tc.backend || f.endpoint != tc.boot.endpoint):
				t.Errorf("forward %+v, want %s to %s", f, ip, tc.backend)
			}
			if (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
				t.Errorf("why %q, want %q", why, tc.why)
			}
		})
	}
	t.Run("IPv6", func(t *testing.T) {
		f, _ := apiForwardOf(&kubeadmBoot{endpoint: "https://[fd00::1]:6443"}, "fd00::2")
		if f.backend != "[fd00::1]:6443" || f.listen() != "[fd00::2]:6443" {
			t.Errorf("forward %+v, listening on %s", f, f.listen())
		}
	})
}

func TestPeerAllowed(t *testing.T) {
	custom := []netip.Prefix{netip.MustParsePrefix("192.168.0.0/24")}
	for _, tc := range []struct {
		allow []netip.Prefix
		peer  string
		want  bool
	}{
		{DefaultHostAPIAllow, "127.0.0.1:40000", true},
		{DefaultHostAPIAllow, "127.3.2.1:40000", true},
		{DefaultHostAPIAllow, "[::1]:40000", true},
		{DefaultHostAPIAllow, "10.88.0.7:40000", true},
		{DefaultHostAPIAllow, "[::ffff:10.88.1.2]:40000", true},
		{DefaultHostAPIAllow, "10.89.0.7:40000", false},
		{DefaultHostAPIAllow, "10.199.77.5:40000", false},
		{DefaultHostAPIAllow, "[fd00::1]:40000", false},
		{custom, "192.168.0.9:1", true},
		{custom, "127.0.0.1:1", false},
		{nil, "127.0.0.1:1", false},
	} {
		t.Run(fmt.Sprintf("%v/%s", tc.allow, tc.peer), func(t *testing.T) {
			peer := net.TCPAddrFromAddrPort(netip.MustParseAddrPort(tc.peer))
			if got := peerAllowed(tc.allow, peer); got != tc.want {
				t.Errorf("peerAllowed = %v, want %v", got, tc.want)
			}
		})
	}
}

// writeDrive writes a config drive holding metaData and userData to a
// host's first disk, as the deploy agent leaves it.
func writeDrive(t *testing.T, s *Server, host, metaData string, userData []byte) {
	t.Helper()
	img, err := configdrive.Build(configdrive.Data{MetaData: []byte(metaData), UserData: userData})
	if err != nil {
		t.Fatal(err)
	}
	p := s.DiskPath(host, s.byName[host].Disks[0].Name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, img, 0o600); err != nil {
		t.Fatal(err)
	}
}

// echoServer plays an API server: it echoes each connection's bytes until
// the test ends, and returns its address.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// onLo reports whether addr is on lo.
func onLo(t *testing.T, addr string) bool {
	t.Helper()
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := lo.Addrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.String() == addr {
			return true
		}
	}
	return false
}

// roundTrip connects to addr from local (nil: the kernel's choice), sends
// a line and expects it back.
func roundTrip(local net.Addr, addr string) error {
	d := net.Dialer{Timeout: time.Second, LocalAddr: local}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // only read: closing cannot lose data
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	msg := []byte("through the host's API server port\n")
	if _, err := c.Write(msg); err != nil {
		return err
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if !bytes.Equal(got, msg) {
		return fmt.Errorf("read %q back", got)
	}
	return nil
}

// eventually polls cond until it returns nil, for at most 10 s.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	var last error
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		last = cond()
		return last == nil, nil
	}); err != nil {
		t.Fatalf("never %s: %v", what, last)
	}
}

// TestHostAPIServers: a booted control-plane host's address answers on
// 6443 with the API server its user-data names, added to lo for it, until
// it powers off; a worker's does not. It adds addresses to lo: root only.
func TestHostAPIServers(t *testing.T) {
	if os.Geteuid() != 0 {
		testtool.Missing(t, "the API server ports add addresses to lo: needs root")
	}
	const cpIP, workerIP = "10.199.77.5", "10.199.77.6"
	for _, a := range []string{cpIP, workerIP} {
		if onLo(t, a) {
			t.Fatalf("%s is already on lo", a)
		}
		t.Cleanup(func() {
			if onLo(t, a) {
				t.Errorf("%s left on lo", a)
				if out, err := exec.Command("ip", "addr", "del", a+"/32", "dev", "lo").CombinedOutput(); err != nil { //nolint:noctx // a local netlink change that cannot hang
					t.Errorf("removing it: %v: %s", err, out)
				}
			}
		})
	}
	backend := echoServer(t)
	hosts := Generate(2, 1)
	hosts[0].NICs[0].IP, hosts[1].NICs[0].IP = cpIP+"/24", workerIP+"/24"
	var log syncBuffer
	s, base := start(t, Config{Hosts: hosts}, Options{HostAPIServers: true, Log: &log})
	c := connect(t, base, testUser, testPassword, false)
	cp, worker := newHostDriver(t, c, "host-0000"), newHostDriver(t, c, "host-0001")
	port := net.JoinHostPort(cpIP, "6443")
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	served := func() error { return roundTrip(loopback, port) }
	gone := func() error {
		if onLo(t, cpIP) {
			return errors.New("the address is on lo")
		}
		if err := roundTrip(loopback, port); err == nil {
			return errors.New("a connection reached the API server")
		}
		return nil
	}

	writeDrive(t, s, "host-0000", `{"local-hostname": "cp-0"}`, initUserData(t, v1beta4, backend, nil, nil, "cp-0"))
	writeDrive(t, s, "host-0001", `{"local-hostname": "worker-0"}`, joinUserData(t, v1beta4, backend, "worker-0"))

	t.Run("a booted control-plane host serves the API server on its address", func(t *testing.T) {
		cp.reset(schemas.OnResetType)
		eventually(t, "served", served)
		if !onLo(t, cpIP) {
			t.Errorf("%s is not on lo", cpIP)
		}
		if want := "host-0000: API server port " + port + " forwarded to https://" + backend; !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log.String())
		}
	})

	t.Run("a peer beyond the allowed networks is closed at once", func(t *testing.T) {
		// Without a local address the kernel picks cpIP itself, which
		// is not in the default networks.
		if err := roundTrip(nil, port); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("a connection from %s: %v, want closed at once", cpIP, err)
		}
		if want := "connection from " + cpIP + " refused"; !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log.String())
		}
	})

	t.Run("a worker serves none", func(t *testing.T) {
		worker.reset(schemas.OnResetType)
		waitHost(t, s, "host-0001", "booted", func(st HostState) bool { return st.Booted })
		s.mu.Lock()
		want, running := s.byName["host-0001"].st.apiWant, s.byName["host-0001"].st.apiWorker
		s.mu.Unlock()
		if !want.none() || running {
			t.Errorf("the worker's API server port: %+v (worker running %v)", want, running)
		}
		if onLo(t, workerIP) {
			t.Errorf("%s is on lo", workerIP)
		}
	})

	t.Run("power off closes the port, its connections and the address", func(t *testing.T) {
		live, err := net.DialTCP("tcp", loopback, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(port)))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = live.Close() }() // only read: closing cannot lose data
		cp.reset(schemas.ForceOffResetType)
		_ = live.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := live.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("a live connection after power off: %v, want closed", err)
		}
		eventually(t, "closed", gone)
		if want := "host-0000: API server port " + port + " closed"; !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log.String())
		}
	})

	t.Run("power on serves it again; a restart too", func(t *testing.T) {
		cp.reset(schemas.OnResetType)
		eventually(t, "served again", served)
		cp.reset(schemas.ForceRestartResetType)
		eventually(t, "served after a restart", served)
	})

	t.Run("Close removes everything", func(t *testing.T) {
		s.Close()
		if err := gone(); err != nil {
			t.Error(err)
		}
		checkNoSecrets(t, log.String(), nil)
	})
}

// TestHostAPIServerCannotListen: a port another process holds is logged
// and the host boots anyway.
func TestHostAPIServerCannotListen(t *testing.T) {
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:6443")
	if err == nil {
		defer func() { _ = ln.Close() }() // only accepts
	} // else someone else holds it, as well
	hosts := Generate(1, 1)
	hosts[0].NICs[0].IP = "127.0.0.1/8"
	var log syncBuffer
	s, base := start(t, Config{Hosts: hosts}, Options{HostAPIServers: true, Log: &log})
	writeDrive(t, s, "host-0000", `{"local-hostname": "cp-0"}`, initUserData(t, v1beta3, "127.0.0.1:1", nil, nil, "cp-0"))
	newHostDriver(t, connect(t, base, testUser, testPassword, false), "host-0000").reset(schemas.OnResetType)
	waitHost(t, s, "host-0000", "booted", func(st HostState) bool { return st.Booted && st.Node == "cp-0" })
	eventually(t, "logged", func() error {
		if !strings.Contains(log.String(), "host-0000: cannot serve the API server port 127.0.0.1:6443: ") {
			return errors.New("not logged")
		}
		return nil
	})
}
