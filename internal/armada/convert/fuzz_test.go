package convert

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// FuzzReadConvert feeds arbitrary streams to Read and Convert: they must
// never panic, and whatever they accept must be complete objects that
// marshal.
func FuzzReadConvert(f *testing.F) {
	inputs, _ := filepath.Glob("testdata/*/input.yaml")
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(stream(okChart, okGroup, okMan)))
	f.Add([]byte("schema: armada/Chart/v2\nmetadata: {name: c}\ndata: {wait: {timeout: soon}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, rerr := Read("f.yaml", bytes.NewReader(data))
		res, cerr := Convert(docs, Options{})
		if cerr != nil {
			if res != nil {
				t.Fatal("a refused conversion returned a result")
			}
			return
		}
		if rerr != nil {
			return
		}
		for _, o := range res.Objects {
			if c, ok := o.(*armadav1.ArmadaChart); ok && (c.Spec.Release == "" || c.Spec.Namespace == "" || c.Spec.Source.Location == "") {
				t.Fatalf("accepted an incomplete chart: %+v", c.Spec)
			}
		}
		if _, err := Marshal(res.Objects, "yaml"); err != nil {
			t.Fatalf("accepted objects do not marshal: %v", err)
		}
	})
}
