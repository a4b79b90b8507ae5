package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDesignRefConfinement checks every way a client could make the server
// read outside its design root or fetch what it should not, and that no
// answer echoes what lies outside.
func TestDesignRefConfinement(t *testing.T) {
	dir, all := design(t)
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// The design inside the root, by copy.
	inside := filepath.Join(root, "site")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if err := os.WriteFile(filepath.Join(inside, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A secret outside the root, and links inside the root pointing at it.
	secret := filepath.Join(filepath.Dir(root), "secret.yaml")
	const secretText = "TOP-SECRET-CONTENT"
	if err := os.WriteFile(secret, []byte("schema: "+secretText+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root, "escape.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(root), filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	// A link that stays inside is followed.
	if err := os.Symlink("site", filepath.Join(root, "current")); err != nil {
		t.Fatal(err)
	}

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(all)
	}))
	defer big.Close()

	local := newServer(t, Options{DesignRoot: root})
	remote := newServer(t, Options{DesignRoot: root, AllowRemote: true, MaxDesignBytes: int64(len(all) - 1), RemoteTimeout: 300 * time.Millisecond})
	tests := []struct {
		name   string
		h      *Server
		ref    string
		code   int
		errHas string
	}{
		{"directory inside", local, inside, http.StatusOK, ""},
		{"relative path inside", local, "site", http.StatusOK, ""},
		{"symlink inside the root", local, filepath.Join(root, "current"), http.StatusOK, ""},
		{"file:// inside", local, "file://" + inside, http.StatusOK, ""},
		{"absolute path outside", local, secret, http.StatusBadRequest, "outside the design root"},
		{"dot-dot traversal", local, "site/../../secret.yaml", http.StatusBadRequest, "outside the design root"},
		{"file:// outside", local, "file://" + secret, http.StatusBadRequest, "outside the design root"},
		{"symlink to a file outside", local, filepath.Join(root, "escape.yaml"), http.StatusBadRequest, "outside the design root"},
		{"symlink to a directory outside", local, "up/secret.yaml", http.StatusBadRequest, "outside the design root"},
		{"missing file", local, "site/nope.yaml", http.StatusBadRequest, "no such file"},
		{"remote refused by default", local, big.URL + "/site.yaml", http.StatusBadRequest, "--allow-remote-designs"},
		{"remote larger than the limit", remote, big.URL + "/site.yaml", http.StatusBadRequest, "larger than"},
		{"remote too slow", remote, slow.URL + "/site.yaml", http.StatusBadRequest, "timed out (--remote-design-timeout)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, tt.h, joinURL(map[string]string{"hostname": "n7", "ip": "10.0.0.7", "design_ref": tt.ref}))
			body := rec.Body.String()
			if rec.Code != tt.code {
				t.Fatalf("status %d, want %d: %.300s", rec.Code, tt.code, body)
			}
			if tt.errHas != "" {
				st := decodeStatus(t, rec.Body.Bytes())
				if st.Parameter != "design_ref" || !strings.Contains(st.Message, tt.errHas) {
					t.Errorf("error %+v, want it to name design_ref and contain %q", st, tt.errHas)
				}
			}
			if strings.Contains(body, secretText) || strings.Contains(body, secret) && !strings.Contains(tt.ref, secret) {
				t.Errorf("the answer reveals what lies outside the root: %.300s", body)
			}
		})
	}
}

func TestNewResolvesTheRoot(t *testing.T) {
	if _, err := New(Options{DesignRoot: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("a missing design root was accepted")
	}
	wd, _ := os.Getwd()
	s := newServer(t, Options{})
	if want, _ := filepath.EvalSymlinks(wd); s.opts.DesignRoot != want {
		t.Errorf("default design root %s, want the working directory %s", s.opts.DesignRoot, want)
	}
}
