package document

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildConfinesLinks builds roots of a site (the confined directory)
// holding symbolic links: a link that leads outside is refused naming the
// link, and nothing of the file behind it is read; links within the site,
// and paths a kustomization writes to lead outside, are read.
func TestBuildConfinesLinks(t *testing.T) {
	const secret = "outside-value-0xBAD"
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: outside}\ndata: {v: "+secret+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// links maps a link under the site to its target; a target
		// starting with OUT/ is under the outside directory.
		links map[string]string
		kust  string
		// link is the link the error must name; empty: the build works.
		link string
	}{
		{name: "file link out", links: map[string]string{"root/cm.yaml": "OUT/cm.yaml"}, kust: "resources: [cm.yaml]\n", link: "root/cm.yaml"},
		{name: "directory link out", links: map[string]string{"root/base": "OUT"}, kust: "resources: [base/cm.yaml]\n", link: "root/base"},
		{name: "link to a link out", links: map[string]string{"root/cm.yaml": "../hop.yaml", "hop.yaml": "OUT/cm.yaml"}, kust: "resources: [cm.yaml]\n", link: "root/cm.yaml"},
		{name: "kustomization link out", links: map[string]string{"root/kustomization.yaml": "OUT/kustomization.yaml"}, kust: "", link: "root/kustomization.yaml"},
		{name: "link within the site", links: map[string]string{"root/cm.yaml": "../shared/cm.yaml"}, kust: "resources: [cm.yaml]\n"},
		{name: "path written to lead outside", kust: "resources: [OUT/cm.yaml]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			site := t.TempDir()
			mustWrite := func(p, c string) {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			mustWrite(filepath.Join(site, "shared/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\n")
			mustWrite(filepath.Join(outside, "kustomization.yaml"), "resources: [cm.yaml]\n")
			if tc.kust != "" {
				mustWrite(filepath.Join(site, "root/kustomization.yaml"), strings.ReplaceAll(tc.kust, "OUT", outside))
			}
			for l, target := range tc.links {
				target = strings.Replace(target, "OUT", outside, 1)
				if err := os.MkdirAll(filepath.Dir(filepath.Join(site, l)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, filepath.Join(site, l)); err != nil {
					t.Fatal(err)
				}
			}
			b, err := Build(filepath.Join(site, "root"), BuildOptions{Confine: site})
			if tc.link == "" {
				if err != nil {
					t.Fatal(err)
				}
				if b.Len() != 1 {
					t.Errorf("%d documents", b.Len())
				}
				return
			}
			var oe *OutsideError
			if !errors.As(err, &oe) {
				t.Fatalf("err = %v, want an *OutsideError", err)
			}
			if oe.Link != filepath.Join(site, tc.link) || !strings.Contains(err.Error(), "symbolic link "+filepath.Join(site, tc.link)) {
				t.Errorf("error names link %q, want %s: %v", oe.Link, filepath.Join(site, tc.link), err)
			}
			if b != nil || strings.Contains(err.Error(), secret) {
				t.Errorf("the file behind the link was read: %v", err)
			}
		})
	}
}
