package genericcontainer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// toolbox is a toolbox GenericContainer named name running script, with
// more spec lines.
func toolbox(name, spec, script string) string {
	return gc(name, "  image: localhost/toolbox\n"+spec+"config: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: s\n  data:\n    script: |\n"+indent(script, "      "))
}

// TestScriptEnvironment: a script gets PATH, HOME and what the spec
// declares, never the rest of airshipctl's environment; names that steer
// the shell are refused in any form, and a name-only SOPS_* entry unless
// the user lists it in $AIRSHIP_PASS_ENV.
func TestScriptEnvironment(t *testing.T) {
	testtool.Path(t, "bash")
	stateDir(t)
	marker := filepath.Join(t.TempDir(), "bash-env-ran")
	bashEnv := filepath.Join(t.TempDir(), "bash-env.sh")
	writeExecutable(t, bashEnv, "touch "+marker+"\n")
	t.Setenv("SOPS_AGE_KEY", "AGE-SECRET-KEY-1TESTVALUE")
	t.Setenv("BASH_ENV", bashEnv)
	t.Setenv("ENV", bashEnv)
	t.Setenv("AIRSHIP_UNRELATED_TOKEN", "unrelated-token-value")
	t.Setenv("PASSED_ON", "declared-value")
	const script = "env | cut -d= -f1 | sort | sed 's/^/name: /' 1>&2\necho \"sops: ${SOPS_AGE_KEY:-unset}\" 1>&2\n"
	tests := []struct {
		name     string
		envVars  string
		passEnv  string
		wantErr  string
		wantLog  []string
		denyLog  []string
		wantVars []string
	}{
		{name: "nothing declared", wantLog: []string{"name: HOME", "name: PATH", "name: RENDERED_BUNDLE_PATH", "sops: unset"},
			denyLog: []string{"name: BASH_ENV", "name: ENV", "name: SOPS_AGE_KEY", "name: AIRSHIP_UNRELATED_TOKEN", "name: USER", "name: PASSED_ON"}},
		{name: "declared by name and with a value", envVars: "  - PASSED_ON\n  - GIVEN=v\n", wantLog: []string{"name: PASSED_ON", "name: GIVEN"},
			denyLog: []string{"name: AIRSHIP_UNRELATED_TOKEN", "name: SOPS_AGE_KEY"}},
		{name: "name-only SOPS_AGE_KEY", envVars: "  - SOPS_AGE_KEY\n", wantErr: `spec.envVars[0] "SOPS_AGE_KEY": a name-only entry would hand airshipctl's own SOPS_AGE_KEY`},
		{name: "name-only SOPS_AGE_KEY allowed by the user", envVars: "  - SOPS_AGE_KEY\n", passEnv: "OTHER, SOPS_AGE_KEY", wantLog: []string{"sops: AGE-SECRET-KEY-1TESTVALUE"}},
		{name: "SOPS_AGE_KEY with a value of the site's", envVars: "  - SOPS_AGE_KEY=site-value\n", wantLog: []string{"sops: site-value"}},
		{name: "name-only BASH_ENV", envVars: "  - BASH_ENV\n", passEnv: "BASH_ENV", wantErr: `spec.envVars[0] "BASH_ENV": BASH_ENV changes what the shell or the loader runs`},
		{name: "BASH_ENV with a value", envVars: "  - BASH_ENV=" + bashEnv + "\n", wantErr: `spec.envVars[0] "BASH_ENV=`},
		{name: "ENV", envVars: "  - X=1\n  - ENV=" + bashEnv + "\n", wantErr: `spec.envVars[1] "ENV=`},
		{name: "exported function", envVars: "  - BASH_FUNC_f%%\n", wantErr: `spec.envVars[0]`},
		{name: "loader preload", envVars: "  - LD_PRELOAD=/tmp/x.so\n", wantErr: `spec.envVars[0] "LD_PRELOAD=/tmp/x.so": LD_PRELOAD changes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvPassEnv, tt.passEnv)
			_ = os.Remove(marker)
			spec := ""
			if tt.envVars != "" {
				spec = "  envVars:\n" + tt.envVars
			}
			ex := newExecutor(t, site{executor: toolbox("envtest", spec, script)})
			verr := ex.Validate(context.Background())
			evs, err := runCollect(t, ex, executor.RunOptions{})
			log := eventText(evs)
			if tt.wantErr != "" {
				for what, e := range map[string]error{"validate": verr, "run": err} {
					if e == nil || !strings.Contains(e.Error(), tt.wantErr) || !strings.Contains(e.Error(), "GenericContainer/envtest") {
						t.Errorf("%s: %v, want an error naming GenericContainer/envtest and %q", what, e, tt.wantErr)
					}
				}
				if strings.Contains(log, "name: ") {
					t.Errorf("the script ran:\n%s", log)
				}
				return
			}
			if verr != nil && !strings.Contains(verr.Error(), "envVars") {
				verr = nil
			}
			if verr != nil || err != nil {
				t.Fatalf("validate %v, run %v\n%s", verr, err, log)
			}
			for _, w := range tt.wantLog {
				if !strings.Contains(log, w+"\n") {
					t.Errorf("log lacks %q:\n%s", w, log)
				}
			}
			for _, w := range tt.denyLog {
				if strings.Contains(log, w+"\n") {
					t.Errorf("log has %q:\n%s", w, log)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("airshipctl's BASH_ENV ran before the script")
			}
		})
	}
}

// TestScriptMounts: what a script writes through an rw: false mount
// reaches nothing; through an rw: true mount it reaches the source; a
// source with a symbolic link out of it is refused.
func TestScriptMounts(t *testing.T) {
	testtool.Path(t, "bash")
	stateDir(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const script = `echo changed > "$CONF/file" || true
touch "$CONF/new" || true
rm -f "$CONF/gone" || true
mkdir -p "$CONF/sub/dir" || true
echo "script done" 1>&2
`
	tests := []struct {
		name      string
		rw        bool
		link      bool
		wantFile  string
		wantNew   bool
		wantGone  bool
		wantErr   string
		wantSrcIn bool
	}{
		{name: "rw: false", wantFile: "original\n"},
		{name: "rw: true", rw: true, wantFile: "changed\n", wantNew: true, wantGone: true},
		{name: "rw: false with a link out of the source", link: true, wantErr: "spec.mounts[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := t.TempDir()
			src := filepath.Join(target, "conf")
			if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			for f, c := range map[string]string{"file": "original\n", "gone": "keep\n", "sub/inner": "inner\n"} {
				if err := os.WriteFile(filepath.Join(src, f), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.link {
				if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(src, "link")); err != nil {
					t.Fatal(err)
				}
			}
			rw := ""
			if tt.rw {
				rw = "    rw: true\n"
			}
			spec := "  envVars:\n  - CONF=/config\n  mounts:\n  - type: bind\n    src: conf\n    dst: /config\n" + rw
			ex := newExecutor(t, site{targetPath: target, executor: toolbox("mounts", spec, script)})
			evs, err := runCollect(t, ex, executor.RunOptions{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "outside the mount's source") {
					t.Fatalf("error %v, want one naming %s and the link", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, eventText(evs))
			}
			if !strings.Contains(eventText(evs), "script done") {
				t.Fatalf("script did not run:\n%s", eventText(evs))
			}
			if data, _ := os.ReadFile(filepath.Join(src, "file")); string(data) != tt.wantFile {
				t.Errorf("conf/file = %q, want %q", data, tt.wantFile)
			}
			if _, err := os.Stat(filepath.Join(src, "new")); (err == nil) != tt.wantNew {
				t.Errorf("conf/new exists: %v, want %v", err == nil, tt.wantNew)
			}
			if _, err := os.Stat(filepath.Join(src, "gone")); (err != nil) != tt.wantGone {
				t.Errorf("conf/gone removed: %v, want %v", err != nil, tt.wantGone)
			}
			if _, err := os.Stat(filepath.Join(src, "sub", "dir")); (err == nil) != tt.rw {
				t.Errorf("conf/sub/dir exists: %v, want %v", err == nil, tt.rw)
			}
		})
	}
}

// TestSinkConfined: sinkOutputDir and the files written into it stay in
// the site directory: .. and absolute paths are refused by validate and
// run, and so is a symbolic link (the sink itself, or a file in it) that
// leads out; nothing is written outside.
func TestSinkConfined(t *testing.T) {
	testtool.Path(t, "bash")
	stateDir(t)
	const script = "cat <<EOF\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: result\ndata:\n  k: v\nEOF\n"
	tests := []struct {
		name string
		sink string
		// prepare lays out the site directory; it returns a file outside
		// the site that must stay as it is.
		prepare func(t *testing.T, site, outside string) string
		wantErr string
		// validateToo: the error is known before anything runs.
		validateToo bool
	}{
		{name: "two levels up", sink: "../..", wantErr: `spec.sinkOutputDir "../.." leads outside the site directory`, validateToo: true},
		{name: "up and back in elsewhere", sink: "out/../../elsewhere", wantErr: "leads outside the site directory", validateToo: true},
		{name: "absolute", sink: "/tmp/out", wantErr: `spec.sinkOutputDir "/tmp/out" is absolute`, validateToo: true},
		{name: "the sink is a link out", sink: "out", validateToo: true, wantErr: "through a symbolic link",
			prepare: func(t *testing.T, site, outside string) string {
				if err := os.Symlink(outside, filepath.Join(site, "out")); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(outside, "configmap_result.yaml")
			}},
		{name: "a file in the sink is a link out", sink: "out", wantErr: "is a symbolic link: refused",
			prepare: func(t *testing.T, site, outside string) string {
				if err := os.MkdirAll(filepath.Join(site, "out"), 0o755); err != nil {
					t.Fatal(err)
				}
				victim := filepath.Join(outside, "victim")
				if err := os.WriteFile(victim, []byte("untouched\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(victim, filepath.Join(site, "out", "configmap_result.yaml")); err != nil {
					t.Fatal(err)
				}
				return victim
			}},
		{name: "inside", sink: "out/results"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := t.TempDir()
			outside := t.TempDir()
			siteDir := filepath.Join(target, "site")
			if err := os.MkdirAll(siteDir, 0o755); err != nil {
				t.Fatal(err)
			}
			guarded := filepath.Join(outside, "configmap_result.yaml")
			if tt.prepare != nil {
				guarded = tt.prepare(t, siteDir, outside)
			}
			before, _ := os.ReadFile(guarded)
			ex := newExecutor(t, site{targetPath: target, executor: toolbox("sink", "  sinkOutputDir: "+tt.sink+"\n", script)})
			verr := ex.Validate(context.Background())
			_, err := runCollect(t, ex, executor.RunOptions{})
			after, _ := os.ReadFile(guarded)
			if string(before) != string(after) {
				t.Errorf("%s changed: %q -> %q", guarded, before, after)
			}
			if tt.wantErr == "" {
				if verr != nil || err != nil {
					t.Fatalf("validate %v, run %v", verr, err)
				}
				if data, err := os.ReadFile(filepath.Join(siteDir, tt.sink, "configmap_result.yaml")); err != nil || !strings.Contains(string(data), "k: v") {
					t.Errorf("output not in the sink: %q %v", data, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "GenericContainer/sink") {
				t.Errorf("run: %v, want an error naming GenericContainer/sink and %q", err, tt.wantErr)
			}
			if tt.validateToo && (verr == nil || !strings.Contains(verr.Error(), tt.wantErr) || !strings.Contains(verr.Error(), "GenericContainer/sink")) {
				t.Errorf("validate: %v, want an error naming GenericContainer/sink and %q", verr, tt.wantErr)
			}
			if tt.sink == "../.." {
				if _, err := os.Stat(filepath.Join(target, "..", "configmap_result.yaml")); err == nil {
					t.Errorf("output written above the site")
				}
			}
		})
	}
}
