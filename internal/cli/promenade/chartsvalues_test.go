package promenade

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/promenade/charts"
)

func TestChartsValues(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := run(t, append([]string{"generate-certs", "--output-dir", dir}, exampleFiles(t)...)...); code != 0 {
		t.Fatalf("generate-certs: %s", errOut)
	}
	in := append(exampleFiles(t), filepath.Join(dir, "certificates.yaml"))

	valuesDir := filepath.Join(dir, "values")
	out, errOut, code := run(t, append([]string{"charts-values", "--output-dir", valuesDir}, in...)...)
	if code != 0 {
		t.Fatalf("charts-values: %s", errOut)
	}
	var written []string
	for _, name := range charts.Names() {
		p := filepath.Join(valuesDir, name+".yaml")
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v; values carry private keys", p, fi.Mode().Perm())
		}
		written = append(written, name)
	}
	if n := strings.Count(out, "wrote "); n != len(written) {
		t.Errorf("reported %d files, want %d:\n%s", n, len(written), out)
	}

	// To standard output: one map keyed by chart, the same values.
	out, errOut, code = run(t, append([]string{"charts-values"}, in...)...)
	if code != 0 {
		t.Fatalf("charts-values: %s", errOut)
	}
	var all map[string]map[string]any
	if err := yaml.Unmarshal([]byte(out), &all); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sort.Strings(written)
	if d := cmp.Diff(written, keys); d != "" {
		t.Errorf("charts (-want +got):\n%s", d)
	}
	b, _ := os.ReadFile(filepath.Join(valuesDir, "etcd.yaml"))
	var etcd map[string]any
	if err := yaml.Unmarshal(b, &etcd); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(all["etcd"], etcd); d != "" {
		t.Errorf("etcd values differ between stdout and the file:\n%s", d)
	}

	// --armada: strict armada.airshipit.org/v1alpha1 objects.
	out, errOut, code = run(t, append([]string{"charts-values", "--armada", "--charts-dir", "/opt/charts", "-n", "armada"}, in...)...)
	if code != 0 {
		t.Fatalf("charts-values --armada: %s", errOut)
	}
	kinds := map[string]int{}
	rd := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out)))
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(doc)) == "" {
			continue
		}
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		kinds[meta.Kind]++
		var obj any
		switch meta.Kind {
		case "ArmadaManifest":
			obj = &armadav1.ArmadaManifest{}
		case "ArmadaChartGroup":
			obj = &armadav1.ArmadaChartGroup{}
		case "ArmadaChart":
			obj = &armadav1.ArmadaChart{}
		case "Secret":
			obj = &corev1.Secret{}
		default:
			t.Fatalf("unexpected kind %q", meta.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Errorf("%s: %v", meta.Kind, err)
		}
		// The values, private keys among them, are in the Secrets only.
		if c, ok := obj.(*armadav1.ArmadaChart); ok && (c.Namespace != "armada" || c.Spec.Source.Location != "/opt/charts" || c.Spec.Values != nil ||
			len(c.Spec.ValuesFrom) != 1 || c.Spec.ValuesFrom[0].Name != "promenade-"+c.Name+"-values") {
			t.Errorf("chart %s: namespace %q, source %+v, values %v from %+v", c.Name, c.Namespace, c.Spec.Source, c.Spec.Values, c.Spec.ValuesFrom)
		}
		if s, ok := obj.(*corev1.Secret); ok && (s.Namespace != "armada" || len(s.Data["values.yaml"]) == 0) {
			t.Errorf("Secret %s/%s: %d bytes of values.yaml", s.Namespace, s.Name, len(s.Data["values.yaml"]))
		}
	}
	if want := map[string]int{"ArmadaManifest": 1, "ArmadaChartGroup": len(charts.Groups), "ArmadaChart": len(charts.Names()), "Secret": len(charts.Names())}; !cmp.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	// --embed-values: the values in the ArmadaCharts, no Secret.
	out, errOut, code = run(t, append([]string{"charts-values", "--armada", "--embed-values"}, in...)...)
	topSecret := regexp.MustCompile(`(?m)^kind: Secret$`)
	if code != 0 || topSecret.MatchString(out) || strings.Count(out, "\n  values:\n") != len(charts.Names()) {
		t.Errorf("--embed-values: exit %d (%s), %d charts with values, Secret present %v", code, errOut, strings.Count(out, "\n  values:\n"), topSecret.MatchString(out))
	}

	// --armada-documents: Armada v2 documents under the name asked for.
	out, errOut, code = run(t, append([]string{"charts-values", "--armada", "--armada-documents", "--manifest-name", "cluster-bootstrap"}, in...)...)
	if code != 0 {
		t.Fatalf("charts-values --armada-documents: %s", errOut)
	}
	if n := strings.Count(out, "schema: armada/Chart/v2"); n != len(charts.Names()) || !strings.Contains(out, "schema: armada/Manifest/v2\n") ||
		!strings.Contains(out, "name: cluster-bootstrap\n") {
		t.Errorf("Armada documents: %d charts, want %d; manifest cluster-bootstrap?", n, len(charts.Names()))
	}
	if _, errOut, code = run(t, append([]string{"charts-values", "--armada-documents"}, in...)...); code == 0 || !strings.Contains(errOut, "need --armada") {
		t.Errorf("--armada-documents alone: exit %d, %q", code, errOut)
	}

	// Without certificates: a clear error naming the missing material.
	_, errOut, code = run(t, append([]string{"charts-values"}, exampleFiles(t)...)...)
	if code == 0 || !strings.Contains(errOut, "generate-certs") {
		t.Errorf("without certificates: exit %d, %q", code, errOut)
	}
}
