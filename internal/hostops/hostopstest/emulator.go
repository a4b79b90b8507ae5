package hostopstest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// StartEmulator serves n emulated hosts (host-0000, ...; label rack
// rack-<i mod racks>) over Redfish on loopback until the test ends, and
// creates their BareMetalHosts and Secrets in namespace ns of the cluster
// c reaches, as a site adopting them would.
func StartEmulator(t testing.TB, c client.Client, ns string, n, racks int, username, password string) *emulator.Server {
	t.Helper()
	srv, err := emulator.New(emulator.Config{Username: username, Password: password, Hosts: emulator.Generate(n, racks)}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if _, err := srv.Start(ctx, "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := emulator.WriteManifests(&buf, srv, ns); err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(&buf))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := c.Create(context.Background(), u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	return srv
}
