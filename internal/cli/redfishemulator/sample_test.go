package redfishemulator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// sampleObject is what the test reads of the sample's documents.
type sampleObject struct {
	Kind     string
	Metadata struct{ Name, Namespace string }
	// Secret
	StringData map[string]string `json:"stringData"`
	// BareMetalHost
	Spec struct {
		BootMACAddress string `json:"bootMACAddress"`
		BMC            struct {
			Address         string `json:"address"`
			CredentialsName string `json:"credentialsName"`
		} `json:"bmc"`
	}
}

// TestSampleHost starts the redfish-emulator command that the comment of
// config/metal3/samples/baremetalhost.yaml gives (on a free port instead of
// its default one) and checks the sample against it: the BMC address is
// the default listen address and an emulated system, the Secret's
// credentials open it, bootMACAddress is that system's first NIC, and the
// namespace the objects are in is one of the samples.
func TestSampleHost(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	samples := filepath.Join(root, "config", "metal3", "samples")
	data, err := os.ReadFile(filepath.Join(samples, "baremetalhost.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(data), "\n") {
		if _, cmd, ok := strings.Cut(line, "#   "+Binary+" "); ok {
			args = strings.Fields(cmd)
		}
	}
	if len(args) == 0 {
		t.Fatalf("the sample's comment gives no %q command line", "#   "+Binary+" ...")
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--listen") {
			t.Fatalf("the sample's command %v has --listen: the test expects the default address", args)
		}
	}
	listen := NewCmd(cli.IOStreams{}).Flags().Lookup("listen").DefValue

	var secret, host *sampleObject
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var o sampleObject
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		switch o.Kind {
		case "Secret":
			secret = &o
		case "BareMetalHost":
			host = &o
		}
	}
	if secret == nil || host == nil {
		t.Fatal("the sample has no Secret or no BareMetalHost")
	}
	ns, err := os.ReadFile(filepath.Join(samples, "namespace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var namespace sampleObject
	if err := yaml.Unmarshal(ns, &namespace); err != nil {
		t.Fatal(err)
	}
	if namespace.Kind != "Namespace" || secret.Metadata.Namespace != namespace.Metadata.Name || host.Metadata.Namespace != namespace.Metadata.Name {
		t.Errorf("Namespace %q, Secret in %q, host in %q", namespace.Metadata.Name, secret.Metadata.Namespace, host.Metadata.Namespace)
	}
	if host.Spec.BMC.CredentialsName != secret.Metadata.Name {
		t.Errorf("credentialsName %q, Secret %q", host.Spec.BMC.CredentialsName, secret.Metadata.Name)
	}
	prefix := "redfish-virtualmedia+http://" + listen
	path, ok := strings.CutPrefix(host.Spec.BMC.Address, prefix)
	if !ok {
		t.Fatalf("address %q is not on the emulator's default address %s", host.Spec.BMC.Address, prefix)
	}

	base, _, _ := serve(t, append(args, "--listen", "127.0.0.1:0")...)
	c, err := gofish.Connect(gofish.ClientConfig{Endpoint: base, Username: secret.StringData["username"], Password: secret.StringData["password"], BasicAuth: true})
	if err != nil {
		t.Fatalf("the Secret's credentials: %v", err)
	}
	sys, err := schemas.GetComputerSystem(c, path)
	if err != nil {
		t.Fatalf("system %s: %v", path, err)
	}
	nics, err := sys.EthernetInterfaces()
	if err != nil || len(nics) == 0 {
		t.Fatalf("NICs of %s: %v %d", path, err, len(nics))
	}
	if !strings.EqualFold(nics[0].MACAddress, host.Spec.BootMACAddress) {
		t.Errorf("bootMACAddress %s, the emulated host's first NIC has %s", host.Spec.BootMACAddress, nics[0].MACAddress)
	}
}
