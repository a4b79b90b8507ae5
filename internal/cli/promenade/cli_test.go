package promenade

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/clitest"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

func exampleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../../examples/site/promenade/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatal("no example files")
	}
	return files
}

func TestGenerateCertsThenBuildAll(t *testing.T) {
	dir := t.TempDir()
	certsDir := filepath.Join(dir, "certs")
	out, errOut, code := run(t, append([]string{"generate-certs", "--output-dir", certsDir}, exampleFiles(t)...)...)
	if code != 0 {
		t.Fatalf("generate-certs: %s", errOut)
	}
	if !strings.Contains(out, "39 generated, 0 reused") {
		t.Errorf("output %q", out)
	}
	// Second run with the output as input reuses everything.
	in := append(exampleFiles(t), filepath.Join(certsDir, "certificates.yaml"))
	out, errOut, code = run(t, append([]string{"generate-certs", "--output-dir", filepath.Join(dir, "certs2")}, in...)...)
	if code != 0 || !strings.Contains(out, "0 generated, 39 reused") {
		t.Fatalf("second generate-certs: %s %s", out, errOut)
	}
	scripts := filepath.Join(dir, "scripts")
	_, errOut, code = run(t, append([]string{"build-all", "--output-dir", scripts, "--validators"}, in...)...)
	if code != 0 {
		t.Fatalf("build-all: %s", errOut)
	}
	for _, name := range []string{"genesis.sh", "join-n1.sh", "join-n2.sh", "join-n3.sh", "remove-n1.sh", "remove-n3.sh", "validate-genesis.sh", "validate-n1.sh", "validate-cluster.sh", "anchors.yaml"} {
		fi, err := os.Stat(filepath.Join(scripts, name))
		if err != nil {
			t.Error(err)
			continue
		}
		if want := os.FileMode(0o700); fi.Mode().Perm() != want && !(name == "anchors.yaml" && fi.Mode().Perm() == 0o600) {
			t.Errorf("%s mode %v", name, fi.Mode().Perm())
		}
	}
	_, _, code = run(t, append([]string{"validate"}, in...)...)
	if code != 0 {
		t.Error("validate failed on valid input")
	}
}

func TestBadInputWritesNothing(t *testing.T) {
	write := func(t *testing.T, body string) string {
		p := filepath.Join(t.TempDir(), "extra.yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, cmd, extra, want string
	}{
		{"certificate naming a missing CA", "generate-certs", `
schema: promenade/PKICatalog/v1
metadata: {schema: metadata/Document/v1, name: extra}
data:
  certificates:
    - {document_name: kubelet-n9, ca: no-such-ca, common_name: "system:node:n9"}
`, `names CA "no-such-ca", which no PKICatalog defines`},
		{"duplicate document name", "generate-certs", `
schema: promenade/KubernetesNode/v1
metadata: {schema: metadata/Document/v1, name: n1}
data: {hostname: n1, ip: 10.0.0.1}
`, `duplicate document name "n1"`},
		{"node without an IP", "build-all", `
schema: promenade/KubernetesNode/v1
metadata: {schema: metadata/Document/v1, name: n9}
data: {hostname: n9}
`, `promenade/KubernetesNode/v1 n9: /data: missing property 'ip'`},
		{"scripts without certificates", "build-all", "# no certificates\n", "run promenade generate-certs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, errOut, code := run(t, append([]string{tc.cmd, "--output-dir", out}, append(exampleFiles(t), write(t, tc.extra))...)...)
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q, want %q", code, errOut, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output directory written on error: %v", err)
			}
		})
	}
}

func TestEveryCommandHasAWorkingExample(t *testing.T) {
	clitest.CheckExamples(t, NewCmd(cli.StdStreams()))
}
