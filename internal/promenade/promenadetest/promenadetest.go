package promenadetest

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/airshipit/airship-go/internal/promenade/certs"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

// ExampleFiles are the example site's Promenade documents.
func ExampleFiles(t testing.TB) []string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	files, err := filepath.Glob(filepath.Join(filepath.Dir(here), "..", "..", "..", "examples", "site", "promenade", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the example site's Promenade documents are missing (%v)", err)
	}
	return files
}

// ExampleSet is the example site's configuration with certificates freshly
// generated for it.
func ExampleSet(t testing.TB) *docset.Set {
	t.Helper()
	set, err := docset.Load(ExampleFiles(t)...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := certs.Generate(set, certs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set.Documents = append(set.Documents, res.Documents...)
	return set
}
