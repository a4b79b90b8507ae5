package haproxy

import (
	"debug/elf"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/test/testtool"
)

// TestClosure follows the libraries of the installed HAProxy, and checks
// the errors of what cannot be followed.
func TestClosure(t *testing.T) {
	bin, want := Binary, []string{"/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libssl.so.3",
		"/lib/x86_64-linux-gnu/libcrypto.so.3", "/lib/x86_64-linux-gnu/libgpg-error.so.0"} // the last needed only through libsystemd and libgcrypt
	if _, err := os.Stat(Binary); err != nil {
		testtool.Missing(t, "%s is not installed: %v; %s", Binary, err, testtool.SetupHint)
	}
	libs, err := Closure(bin)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range libs {
		got[l.Path] = l.Source
		if st, err := os.Lstat(l.Source); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s: source %s is not a regular file (%v)", l.Path, l.Source, err)
		}
	}
	for _, w := range want {
		if runtime.GOARCH == "amd64" && got[w] == "" {
			t.Errorf("%s missing from the closure of %s: %v", w, bin, libs)
		}
	}
	for _, tc := range []struct {
		name, errWant string
		run           func() error
	}{
		{"missing binary", "reading /nonexistent/haproxy", func() error { _, err := Closure("/nonexistent/haproxy"); return err }},
		{"missing library", "not found in /nonexistent", func() error {
			_, err := find("libnothere.so.9", []string{"/nonexistent"}, elf.EM_X86_64, elf.ELFCLASS64)
			return err
		}},
		{"library of another class", "not found in /lib64", func() error {
			_, err := find("ld-linux-x86-64.so.2", []string{"/lib64"}, elf.EM_X86_64, elf.ELFCLASS32)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); err == nil || !strings.Contains(err.Error(), tc.errWant) {
				t.Errorf("error %v, want one with %q", err, tc.errWant)
			}
		})
	}
}
