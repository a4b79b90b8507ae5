package emulator

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exampleHosts is the example site's hosts: the emulator's definition and
// the manifests it writes for them, which the site applies.
const exampleHosts = "../../../examples/site/function/hosts"

// exampleListen is where `make demo` serves them, the address their
// BareMetalHosts name.
const exampleListen = "127.0.0.1:8000"

// TestExampleSiteHosts keeps the example site's hosts.yaml what the
// emulator writes for emulator.yaml, so the site's BareMetalHosts match
// the hosts `make demo` serves.
func TestExampleSiteHosts(t *testing.T) {
	cfg, err := LoadConfig(filepath.Join(exampleHosts, "emulator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base, err := s.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	var buf bytes.Buffer
	if err := WriteManifests(&buf, s, "metal3"); err != nil {
		t.Fatal(err)
	}
	// The port is the test's; the site's is the demo's.
	want := strings.ReplaceAll(buf.String(), strings.TrimPrefix(base, "http://"), exampleListen)
	got, err := os.ReadFile(filepath.Join(exampleHosts, "hosts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s/hosts.yaml is not what the emulator writes for emulator.yaml; regenerate it with\n"+
			"  redfish-emulator --config emulator.yaml --listen %s --manifests hosts.yaml --namespace metal3",
			exampleHosts, exampleListen)
	}
	if n := strings.Count(want, "kind: BareMetalHost"); n != len(cfg.Hosts) || n == 0 {
		t.Errorf("%d BareMetalHosts for %d hosts", n, len(cfg.Hosts))
	}
}
