package data

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
)

var update = flag.Bool("update", false, "rewrite the expected files under testdata/<case>/ from the actual output")

// golden is testdata/<case>/input.yaml: a template spec, the objects it is
// rendered for, the index and the addresses of the pools.
type golden struct {
	Index         int                            `json:"index"`
	Namespace     string                         `json:"namespace"`
	Pools         map[string]PoolAddress         `json:"pools"`
	Template      infrav1.Metal3DataTemplateSpec `json:"template"`
	Metal3Machine struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	} `json:"metal3Machine"`
	Machine struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	} `json:"machine"`
	Host metal3v1alpha1.BareMetalHost `json:"host"`
}

func (g *golden) input() Input {
	return Input{
		Template: &g.Template, Namespace: g.Namespace, Index: g.Index,
		Metal3Machine: &g.Metal3Machine.Metadata, Machine: &g.Machine.Metadata,
		Host: &g.Host, Pools: g.Pools,
	}
}

// TestRenderGolden renders every case under testdata/ and compares with
// metaData.yaml, networkData.yaml and pools.yaml there, or error.txt for a
// case that must fail. go test -update rewrites them.
func TestRenderGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/input.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases under testdata/: %v", err)
	}
	for _, in := range dirs {
		dir := filepath.Dir(in)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var g golden
			if err := yaml.UnmarshalStrict(raw, &g); err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			got := map[string][]byte{}
			var failure error
			md, err := RenderMetaData(g.input())
			if err != nil {
				failure = err
			} else if md != nil {
				got["metaData.yaml"] = md
			}
			if failure == nil {
				nd, err := RenderNetworkData(g.input())
				if err != nil {
					failure = err
				} else if nd != nil {
					got["networkData.yaml"] = nd
				}
			}
			refs, err := Pools(g.input())
			if err != nil && failure == nil {
				failure = err
			}
			if failure != nil {
				got = map[string][]byte{"error.txt": []byte(failure.Error() + "\n")}
			} else if len(refs) > 0 {
				got["pools.yaml"] = poolsYAML(refs)
			}
			compare(t, dir, got)
		})
	}
}

func poolsYAML(refs map[string]PoolRef) []byte {
	var b bytes.Buffer
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for k := range refs {
			if !yield(k) {
				return
			}
		}
	}) {
		r := refs[n]
		fmt.Fprintf(&b, "%s: %s.%s from %s\n", n, r.Kind, r.APIGroup, r.Field)
	}
	return b.Bytes()
}

// compare checks the expected files of a case: exactly the names of got,
// with its content.
func compare(t *testing.T, dir string, got map[string][]byte) {
	t.Helper()
	for _, name := range []string{"metaData.yaml", "networkData.yaml", "pools.yaml", "error.txt"} {
		path := filepath.Join(dir, name)
		want, err := os.ReadFile(path)
		content, produced := got[name]
		if *update {
			if produced {
				if err := os.WriteFile(path, content, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err == nil {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		switch {
		case produced && err != nil:
			t.Errorf("%v (go test -update writes it)\n--- got\n%s", err, content)
		case !produced && err == nil:
			t.Errorf("%s exists but nothing was rendered for it (go test -update removes it)", path)
		case produced && !bytes.Equal(content, want):
			t.Errorf("%s differs (go test -update if the change is intended)\n--- got\n%s--- want\n%s", path, content, want)
		}
	}
}

// TestRenderNeedsObjects: an input without its host is an error, not a panic.
func TestRenderNeedsObjects(t *testing.T) {
	in := Input{Template: &infrav1.Metal3DataTemplateSpec{MetaData: &infrav1.MetaData{}}, Metal3Machine: &metav1.ObjectMeta{}, Machine: &metav1.ObjectMeta{}}
	if _, err := RenderMetaData(in); err == nil || !strings.Contains(err.Error(), "BareMetalHost") {
		t.Errorf("got %v, want an error naming the BareMetalHost", err)
	}
}

func TestNetmask(t *testing.T) {
	for _, tc := range []struct {
		prefix, bits int
		want         string
	}{
		{24, 32, "255.255.255.0"}, {0, 32, "0.0.0.0"}, {32, 32, "255.255.255.255"}, {25, 32, "255.255.255.128"},
		{64, 128, "ffff:ffff:ffff:ffff::"}, {0, 128, "::"}, {128, 128, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
	} {
		got, err := netmask(tc.prefix, tc.bits)
		if err != nil || got != tc.want {
			t.Errorf("netmask(%d, %d) = %q, %v; want %q", tc.prefix, tc.bits, got, err, tc.want)
		}
	}
	if _, err := netmask(33, 32); err == nil {
		t.Error("netmask(33, 32) did not fail")
	}
}
