package marker

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	a, b := New("bmc password"), New("bmc password")
	if a.Value == b.Value {
		t.Fatalf("two markers share the value %s", a.Value)
	}
	if a.Name != "bmc password" {
		t.Errorf("name %q", a.Name)
	}
	if !regexp.MustCompile(`^AIRSHIP-MARKER-BMC-PASSWORD-[0-9a-f]{20}$`).MatchString(a.Value) {
		t.Errorf("value %q: want Prefix, the name in upper case and 20 hex digits", a.Value)
	}
	// The value survives JSON, URL query and YAML quoting unchanged, so a
	// plain search covers those.
	j, _ := json.Marshal(map[string]string{"k": "a\"b\n" + a.Value})
	if !strings.Contains(string(j), a.Value) {
		t.Errorf("JSON changed the marker: %s", j)
	}
}

func TestScanStringEncodings(t *testing.T) {
	m := New("secret")
	other := New("other")
	// A value whose base64 has '+' and '/' at every alignment, so base64url
	// differs from base64.
	url := Of("url", "AIRSHIP-MARKER-???>>>???>>>???>>>")
	set := Set{m, other, url}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	b64url := func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, text, want string // want: the encoding found, "" for none
	}{
		{"clean", "nothing to see\nAIRSHIP-MARKER-SECRET-0000 is another value", ""},
		{"plain in a log line", "level=info msg=\"password=" + m.Value + "\"", "plain"},
		{"JSON-escaped", `{"msg":"user \"x\" said ` + m.Value + `\n"}`, "plain"},
		{"base64 as in Secret data", "data:\n  password: " + b64(m.Value) + "\n", "base64"},
		{"base64, one byte before", b64("x" + m.Value), "base64"},
		{"base64, two bytes before and some after", b64("xy" + m.Value + "tail"), "base64"},
		{"HTTP Basic authorization", "Authorization: Basic " + b64("admin:"+m.Value), "base64"},
		{"base64, unpadded inside JSON", base64.RawStdEncoding.EncodeToString([]byte(`{"p":"` + m.Value + `"}`)), "base64"},
		{"base64url", b64url("\xff\xfe" + url.Value + "\xff"), "base64url"},
		{"base64 twice (docker config)", b64(`{"auths":{"r":{"auth":"` + b64("u:"+m.Value) + `"}}}`), "base64-twice"},
		{"hex", "bytes: " + hex.EncodeToString([]byte("pw="+m.Value)), "hex"},
		{"a prefix of the marker only", m.Value[:len(m.Value)-1], ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := set.ScanString("output", tc.text)
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("findings in clean text: %v", got)
				}
				return
			}
			planted := m.Name
			if tc.want == "base64url" {
				planted = url.Name
			}
			found := false
			for _, f := range got {
				if f.Marker == other.Name {
					t.Errorf("found a marker that was not planted: %v", f)
				}
				if f.Marker == planted && f.Encoding == tc.want && (f.Where == "output, line 1" || f.Where == "output, line 2") {
					found = true
				}
			}
			if !found {
				t.Fatalf("want marker %s as %s in %q, got %v", planted, tc.want, tc.text, got)
			}
		})
	}
}

func TestScanStringLinesAndContext(t *testing.T) {
	m := New("sops")
	got := Set{m}.ScanString("airshipctl stderr", "first\nsecond "+m.Value+" end\nthird "+m.Value+"\n")
	if len(got) != 2 || got[0].Where != "airshipctl stderr, line 2" || got[1].Where != "airshipctl stderr, line 3" {
		t.Fatalf("findings %v, want lines 2 and 3", got)
	}
	if !strings.Contains(got[0].Context, `first\nsecond `) || !strings.Contains(got[0].String(), "marker sops (plain) in airshipctl stderr, line 2") {
		t.Errorf("finding %q lacks its context or place", got[0].String())
	}
}

func TestWithout(t *testing.T) {
	a, b := New("a"), New("b")
	set := Set{a, b}.Without("a")
	if len(set) != 1 || set[0] != b {
		t.Fatalf("Without(a) = %v", set)
	}
	if got := set.ScanString("x", a.Value); len(got) != 0 {
		t.Errorf("a removed marker was found: %v", got)
	}
}

func TestScanPaths(t *testing.T) {
	m := New("bmc")
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("clean.log", "all fine\n")
	leaky := write("logs/deep/operator.log", "a\nb\nc\nGET with Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+m.Value))+"\n")
	single := write("single.txt", m.Value)
	// A symlink in a tree is not followed (it may lead anywhere).
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte(m.Value), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}

	got, err := Set{m}.ScanPaths(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Where != leaky+":4" || got[0].Encoding != "base64" || got[1].Where != single+":1" || got[1].Encoding != "plain" {
		t.Fatalf("findings %v, want %s:4 (base64) and %s:1 (plain)", got, leaky, single)
	}
	// A file named directly.
	if got, err := (Set{m}).ScanPaths(single, filepath.Join(dir, "clean.log")); err != nil || len(got) != 1 {
		t.Errorf("ScanPaths(files) = %v, %v", got, err)
	}
	if got, err := (Set{New("bmc")}).ScanPaths(dir); err != nil || len(got) != 0 {
		t.Errorf("another marker found in the tree: %v %v", got, err)
	}
	if _, err := (Set{m}).ScanPaths(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing path is no error")
	}
}
