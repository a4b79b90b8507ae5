package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// RealNodeCluster starts a local control plane with one real node (a
// kubelet, its containerd, the host's kube-proxy) that imports the OCI
// archives of imagesDir (the sandbox image pause among them), and stops
// it, putting the host back, when the test ends. Real-node clusters take
// turns on a host (local.LockRealNodeHost), so tests of several packages
// may ask for one at once. It fails (AIRSHIP_REQUIRE_TESTBIN) or skips
// without root or the node binaries.
func RealNodeCluster(t testing.TB, imagesDir string) *local.State {
	t.Helper()
	bin := local.DefaultBinDir()
	if missing := append(local.MissingBinaries(bin), local.MissingNodeBinaries(bin)...); len(missing) > 0 {
		testtool.Missing(t, "%s missing from %s; %s", strings.Join(missing, ", "), bin, local.BuildHint)
	}
	if os.Geteuid() != 0 {
		testtool.Missing(t, "a real node needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	unlock, err := local.LockRealNodeHost(ctx)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "cluster")
	t.Cleanup(func() {
		defer unlock()
		if _, err := local.Down(local.DownOptions{StateDir: state, Purge: true}); err != nil {
			t.Errorf("stopping the real-node cluster: %v", err)
		}
	})
	var progress bytes.Buffer
	res, err := local.Up(ctx, local.Options{StateDir: state, BinDir: bin, Nodes: 0, RealNodes: 1, ImagesDir: imagesDir, Timeout: 3 * time.Minute, Progress: &progress})
	if err != nil {
		t.Fatalf("a local cluster with a real node: %v\n%s", err, progress.String())
	}
	return res.State
}

// BuildImages builds, as `make images` does (hack/images), the images of
// the named binaries of cmd/ (pause among them for a real node) for this
// machine's platform, with haproxy's when asked, into a new directory, and
// returns it: the OCI archives (<name>.oci.tar) and kustomization.yaml
// with their digests.
func BuildImages(t testing.TB, binaries []string, haproxy bool) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "images")
	cmd := exec.CommandContext(t.Context(), "go", "run", "./hack/images", "--out", out, "--platforms", "linux/"+runtime.GOARCH,
		"--binaries", strings.Join(binaries, ","), fmt.Sprintf("--haproxy=%t", haproxy))
	cmd.Dir = root
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the images %v: %v\n%s", binaries, err, o)
	}
	return out
}
