package marker

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Prefix starts every generated marker value.
const Prefix = "AIRSHIP-MARKER-"

// Marker is a planted value and the name findings call it by.
type Marker struct {
	Name  string
	Value string
}

// New returns a marker named name whose value is unique: Prefix, the
// name in upper case and 20 random hex digits. Its alphabet (A-Z, 0-9,
// a-f and '-') needs no escaping in JSON, YAML, URLs or shell words, so it
// can be planted anywhere a password goes.
func New(name string) Marker {
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	up := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '-'
	}, name)
	return Marker{Name: name, Value: Prefix + up + "-" + hex.EncodeToString(b)}
}

// Of names a value the test did not generate (a key, a token) so that it
// is looked for too.
func Of(name, value string) Marker { return Marker{Name: name, Value: value} }

// Finding is one place a marker was found.
type Finding struct {
	// Marker is the name of the marker found.
	Marker string
	// Encoding is how it was written: plain, base64, base64url,
	// base64-twice or hex.
	Encoding string
	// Where names the place: a file and line, a command's output and
	// line, or a cluster, object and field path.
	Where string
	// Context is the text around the finding, on one line.
	Context string
}

func (f Finding) String() string {
	return fmt.Sprintf("marker %s (%s) in %s: …%s…", f.Marker, f.Encoding, f.Where, f.Context)
}

// encoding turns a marker value into the substrings that show it once
// encoded, wherever it sits inside a longer encoded value.
type encoding struct {
	name    string
	needles func(string) []string
}

var encodings = []encoding{
	{"plain", func(v string) []string { return []string{v} }},
	{"base64", func(v string) []string { return base64Needles(base64.StdEncoding, v) }},
	{"base64url", func(v string) []string { return base64Needles(base64.URLEncoding, v) }},
	{"base64-twice", func(v string) []string {
		var out []string
		for _, inner := range base64Needles(base64.StdEncoding, v) {
			out = append(out, base64Needles(base64.StdEncoding, inner)...)
		}
		return out
	}},
	{"hex", func(v string) []string { return []string{hex.EncodeToString([]byte(v))} }},
}

// minNeedle is the shortest needle worth looking for: shorter ones (from
// very short values) would match by chance.
const minNeedle = 12

// base64Needles returns, for each of the three alignments value may have
// inside a longer encoded string, the part of its encoding that does not
// depend on the bytes around it: the groups of four characters that encode
// three bytes of value only.
func base64Needles(enc *base64.Encoding, value string) []string {
	var out []string
	for k := 0; k < 3; k++ {
		buf := append(make([]byte, k), value...)
		s := enc.EncodeToString(buf)
		start := 0
		if k > 0 {
			start = 4 // the first group mixes the unknown bytes before value
		}
		end := len(buf) / 3 * 4 // a partial last group mixes the bytes after it
		if end-start >= minNeedle {
			out = append(out, s[start:end])
		}
	}
	return out
}

// Set is the markers a scan looks for.
type Set []Marker

type needle struct {
	marker, encoding, text string
}

func (s Set) needles() []needle {
	var out []needle
	for _, m := range s {
		if m.Value == "" {
			continue
		}
		// base64url's needles are base64's when no '+' or '/' occurs: one
		// finding, under the first encoding.
		seen := map[string]bool{}
		for _, e := range encodings {
			for _, n := range e.needles(m.Value) {
				if !seen[n] && (e.name == "plain" || len(n) >= minNeedle) {
					seen[n] = true
					out = append(out, needle{m.Name, e.name, n})
				}
			}
		}
	}
	return out
}

// Without returns the set without the markers of the given names.
func (s Set) Without(names ...string) Set {
	var out Set
	for _, m := range s {
		keep := true
		for _, n := range names {
			if m.Name == n {
				keep = false
			}
		}
		if keep {
			out = append(out, m)
		}
	}
	return out
}

// ScanString looks for the markers in text; where names the text (a
// command and its stream) and findings add the line.
func (s Set) ScanString(where, text string) []Finding {
	return s.scan(text, func(line int) string { return fmt.Sprintf("%s, line %d", where, line) })
}

// scan finds every needle in text, once per marker, encoding and line.
func (s Set) scan(text string, at func(line int) string) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for _, n := range s.needles() {
		for off := 0; ; {
			i := strings.Index(text[off:], n.text)
			if i < 0 {
				break
			}
			i += off
			off = i + len(n.text)
			line := strings.Count(text[:i], "\n") + 1
			key := fmt.Sprintf("%s/%s/%d", n.marker, n.encoding, line)
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, Finding{Marker: n.marker, Encoding: n.encoding, Where: at(line), Context: around(text, i, len(n.text))})
		}
	}
	return out
}

// around is up to 40 characters either side of text[i:i+n], on one line.
func around(text string, i, n int) string {
	from, to := max(0, i-40), min(len(text), i+n+40)
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(text[from:to])
}

// ScanPaths scans files and, recursively, the regular files of
// directories; a finding names the file and line. Symlinks are not
// followed inside directories.
func (s Set) ScanPaths(paths ...string) ([]Finding, error) {
	var out []Finding
	scanFile := func(p string) error {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, s.scan(string(data), func(line int) string { return fmt.Sprintf("%s:%d", p, line) })...)
		return nil
	}
	for _, root := range paths {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				return scanFile(p)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	sortFindings(out)
	return out, nil
}

func sortFindings(f []Finding) {
	sort.SliceStable(f, func(i, j int) bool { return f[i].Where < f[j].Where })
}
