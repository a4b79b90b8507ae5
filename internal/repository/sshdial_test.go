package repository

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

const sshTestPassword = "ssh-pull-pw"

// sshServer is an SSH server on loopback; exec runs a session's command.
type sshServer struct {
	t     *testing.T
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// newSSHServer listens on 127.0.0.1 and trusts its host key through a
// known_hosts file named by SSH_KNOWN_HOSTS, as a user's would be.
// handshake false: connections are accepted and never answered. exec
// runs the command of a session.
func newSSHServer(t *testing.T, handshake bool, exec func(cmd string, ch ssh.Channel)) *sshServer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sshServer{t: t, ln: ln}
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, []byte(knownhosts.Line([]string{knownhosts.Normalize(ln.Addr().String())}, signer.PublicKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_KNOWN_HOSTS", kh)
	cfg := &ssh.ServerConfig{PasswordCallback: func(_ ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
		if string(pw) != sshTestPassword {
			return nil, errors.New("wrong password")
		}
		return nil, nil
	}}
	cfg.AddHostKey(signer)
	t.Cleanup(s.close)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, conn)
			s.mu.Unlock()
			if handshake {
				go s.serve(conn, cfg, exec)
			}
		}
	}()
	return s
}

func (s *sshServer) close() {
	_ = s.ln.Close() // the test is over: nothing to report to
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close() // the client may have closed it already
	}
}

func (s *sshServer) serve(conn net.Conn, cfg *ssh.ServerConfig, exec func(string, ssh.Channel)) {
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			for req := range creqs {
				if req.Type != "exec" {
					_ = req.Reply(false, nil)
					continue
				}
				var payload struct{ Command string }
				if err := ssh.Unmarshal(req.Payload, &payload); err != nil {
					_ = req.Reply(false, nil)
					continue
				}
				_ = req.Reply(true, nil)
				go func() {
					exec(payload.Command, ch)
					_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{0}))
					_ = ch.Close() // the client may have closed it already
				}()
			}
		}()
	}
}

func (s *sshServer) url(path string) string {
	// A password in the URL shows the redaction; the auth carries the
	// one the server takes.
	return fmt.Sprintf("ssh://git:url-secret@%s/%s", s.ln.Addr(), path)
}

func pktLine(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// TestPullOverSSHBounds: over ssh://, the pull's deadline bounds the
// connect and handshake, and its byte cap what the remote sends.
func TestPullOverSSHBounds(t *testing.T) {
	auth := &v1.RepoAuth{Type: "ssh-pass", SSHPassword: sshTestPassword}
	tests := []struct {
		name      string
		handshake bool
		opts      Options
		wantIs    error
		wantMsg   string
	}{
		{"a server that never shakes hands", false, Options{Timeout: 300 * time.Millisecond}, context.DeadlineExceeded, "stopped after 300ms"},
		{"more than the cap", true, Options{MaxFetchBytes: 64 << 10}, ErrTooLarge, "received more than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Refs without end (8 MiB of them, so that an unbounded pull
			// fails too, and soon, rather than filling the memory).
			srv := newSSHServer(t, tt.handshake, func(cmd string, ch ssh.Channel) {
				if !strings.HasPrefix(cmd, "git-upload-pack ") {
					return
				}
				const hash = "0123456789012345678901234567890123456789"
				if _, err := ch.Write([]byte(pktLine(hash + " HEAD\x00multi_ack ofs-delta\n"))); err != nil {
					return
				}
				for i, sent := 0, 0; sent < 8<<20; i++ {
					line := pktLine(fmt.Sprintf("%s refs/heads/b%d\n", hash, i))
					if _, err := ch.Write([]byte(line)); err != nil {
						return
					}
					sent += len(line)
				}
			})
			dir := filepath.Join(t.TempDir(), "site")
			done := make(chan error, 1)
			go func() {
				_, err := Pull(context.Background(), "primary", &v1.Repository{URL: srv.url("site.git"), Auth: auth}, dir, tt.opts)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				// Unbounded, the pull waits as long as the server does.
				t.Fatal("the pull is still running after a minute")
			}
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("error %v, want one wrapping %v", err, tt.wantIs)
			}
			msg := err.Error()
			if !strings.Contains(msg, "repository primary (ssh://git:REDACTED@127.0.0.1:") || !strings.Contains(msg, tt.wantMsg) || strings.Contains(msg, "url-secret") {
				t.Errorf("error %q: want the repository with its URL redacted and %q, never the password", msg, tt.wantMsg)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("a failed clone left %s behind (%v)", dir, err)
			}
		})
	}
}

// TestPullOverSSH: a pull over ssh:// goes through the bounded dialer and
// arrives whole, and the next pull fetches into the clone.
func TestPullOverSSH(t *testing.T) {
	gitBin := testtool.Path(t, "git")
	o := newOrigin(t)
	first := o.commit("site.yaml", "v: 1\n")
	root := filepath.Dir(o.dir)
	srv := newSSHServer(t, true, func(cmd string, ch ssh.Channel) {
		const prefix = "git-upload-pack '/"
		if !strings.HasPrefix(cmd, prefix) || !strings.HasSuffix(cmd, "'") {
			return
		}
		c := exec.CommandContext(t.Context(), gitBin, "upload-pack", filepath.Join(root, strings.TrimSuffix(strings.TrimPrefix(cmd, prefix), "'")))
		c.Stdin, c.Stdout, c.Stderr = ch, ch, ch.Stderr()
		_ = c.Run()
	})
	r := &v1.Repository{URL: srv.url(filepath.Base(o.dir)), Auth: &v1.RepoAuth{Type: "ssh-pass", SSHPassword: sshTestPassword}}
	dir := filepath.Join(t.TempDir(), "site")
	res, err := Pull(context.Background(), "primary", r, dir, Options{MaxFetchBytes: 4 << 20})
	if err != nil || res.Revision != first.String() || read(t, dir, "site.yaml") != "v: 1\n" {
		t.Fatalf("clone over ssh: %+v, %v", res, err)
	}
	second := o.commit("site.yaml", "v: 2\n")
	res, err = Pull(context.Background(), "primary", r, dir, Options{MaxFetchBytes: 4 << 20})
	if err != nil || res.Action != "updated" || res.Revision != second.String() || read(t, dir, "site.yaml") != "v: 2\n" {
		t.Fatalf("fetch over ssh: %+v, %v", res, err)
	}
}
