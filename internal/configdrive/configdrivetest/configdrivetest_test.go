package configdrivetest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
)

// recorder is a testing.TB that records failures instead of stopping the
// test, to check what ProvisionedDisk reports.
type recorder struct {
	testing.TB
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// Fatalf records and ends the calling goroutine, as testing.T's does.
func (r *recorder) Fatalf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
	r.fatal = true
	panic(r)
}

func (r *recorder) run(f func()) {
	defer func() {
		if v := recover(); v != nil && v != r {
			panic(v)
		}
	}()
	f()
}

// TestProvisionedDisk: a host's disk as the deploy agent leaves it (the
// image at its start, a config drive partition added at the end) passes
// and yields the config drive; a disk whose partition bytes differ, or
// without a config drive, is reported.
func TestProvisionedDisk(t *testing.T) {
	dir := t.TempDir()
	image := configdrivetest.GPTImage(t, filepath.Join(dir, "image.raw"), 4<<20)
	iso, err := configdrive.Build(configdrive.Data{UserData: []byte("#cloud-config\n"), MetaData: []byte(`{"uuid": "u1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	part := configdrivetest.FirstPartition(t, image)
	if part.Start != 1<<20 || part.Size != 1<<20 {
		t.Fatalf("GPTImage's first partition %+v, want 1 MiB at 1 MiB", part)
	}
	for _, tc := range []struct {
		name    string
		corrupt bool // a byte of the image's partition changed
		noCD    bool // no config drive written
		wantErr string
	}{
		{name: "deployed"},
		{name: "partition changed", corrupt: true, wantErr: "does not hold the image's partition"},
		{name: "no config drive", noCD: true, wantErr: "has no config drive partition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sda")
			disk := disk(t, path, image, 128<<20)
			if tc.corrupt {
				if _, err := disk.WriteAt([]byte{0xff}, part.Start+part.Size/2); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.noCD {
				p, err := configdrive.AddPartition(disk, 128<<20, int64(len(iso)), configdrive.Label)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := disk.WriteAt(iso, p.Start); err != nil {
					t.Fatal(err)
				}
			}
			if err := disk.Close(); err != nil {
				t.Fatal(err)
			}
			r := &recorder{TB: t}
			var got configdrive.Data
			r.run(func() { got = configdrivetest.ProvisionedDisk(r, path, image) })
			if tc.wantErr == "" && len(r.errors) > 0 || tc.wantErr != "" && !slices.ContainsFunc(r.errors, func(e string) bool { return strings.Contains(e, tc.wantErr) }) {
				t.Fatalf("ProvisionedDisk reported %q, want %q", r.errors, tc.wantErr)
			}
			if tc.wantErr == "" && (string(got.UserData) != "#cloud-config\n" || string(got.MetaData) != `{"uuid": "u1"}`) {
				t.Errorf("config drive %+v, want the one written", got)
			}
		})
	}
}

// disk writes image at the start of a sparse file of size bytes at path,
// as Ironic's agent writes an image to a host's disk.
func disk(t *testing.T, path string, image []byte, size int64) *os.File {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(image, 0); err != nil {
		t.Fatal(err)
	}
	return f
}
