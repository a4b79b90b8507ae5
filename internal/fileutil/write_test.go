package fileutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		mode os.FileMode
	}{
		{"new file 0600", filepath.Join(dir, "a"), 0o600},
		{"nested dirs created", filepath.Join(dir, "x", "y", "b"), 0o644},
		{"replaces existing with tighter mode", filepath.Join(dir, "a"), 0o400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := WriteAtomic(tt.path, []byte(tt.name), tt.mode); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tt.mode {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), tt.mode)
			}
			got, _ := os.ReadFile(tt.path)
			if string(got) != tt.name {
				t.Errorf("content %q", got)
			}
			if fi, err := os.Stat(filepath.Dir(filepath.Join(dir, "x", "y"))); err == nil && fi.Mode().Perm() != 0o700 {
				t.Errorf("created dir mode %v, want 0700", fi.Mode().Perm())
			}
		})
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name()[0] == '.' {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

func TestWriteAtomicFailsWithoutPartialFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "sub")
	// A directory in the way makes the rename fail.
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(target, []byte("x"), 0o600); err == nil {
		t.Fatal("writing over a non-empty directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left %d entries, want only the directory", len(entries))
	}
}
