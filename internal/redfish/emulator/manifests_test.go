package emulator

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/airshipit/airship-go/internal/bmc"
	"github.com/airshipit/airship-go/internal/strictyaml"
)

func TestWriteManifests(t *testing.T) {
	hosts := Generate(2, 2)
	hosts = append(hosts, Host{Name: "own-creds", Username: "root", Password: "root-Passw0rd"})
	s, err := New(Config{Username: testUser, Password: testPassword, Hosts: hosts}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteManifests(&bytes.Buffer{}, s, "metal3"); err == nil {
		t.Error("manifests of a server not started: no error")
	}
	s, _ = start(t, Config{Hosts: hosts}, Options{})
	var buf bytes.Buffer
	if err := WriteManifests(&buf, s, "metal3"); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(buf.String(), "\n---\n")
	if len(docs) != 3*len(hosts) {
		t.Fatalf("%d documents, want %d", len(docs), 3*len(hosts))
	}
	for i, h := range s.Hosts() {
		var bmcSecret, ndSecret corev1.Secret
		var bmh metal3v1alpha1.BareMetalHost
		for j, into := range []any{&bmcSecret, &ndSecret, &bmh} {
			if err := strictyaml.Unmarshal([]byte(docs[3*i+j]), into); err != nil {
				t.Fatalf("%s document %d: %v\n%s", h.Name, j, err, docs[3*i+j])
			}
		}
		user, password, _ := s.Credentials(h.Name)
		if bmcSecret.Kind != "Secret" || bmcSecret.Name != h.Name+"-bmc-secret" || bmcSecret.Namespace != "metal3" || bmcSecret.Type != corev1.SecretTypeOpaque ||
			string(bmcSecret.Data["username"]) != user || string(bmcSecret.Data["password"]) != password {
			t.Errorf("BMC Secret %+v", bmcSecret.ObjectMeta)
		}
		var nd struct {
			Links []struct {
				MAC string `json:"ethernet_mac_address"`
			} `json:"links"`
			Networks []struct {
				Address string `json:"ip_address"`
			} `json:"networks"`
		}
		if ndSecret.Name != h.Name+"-network-data" || json.Unmarshal(ndSecret.Data["networkData"], &nd) != nil || len(nd.Links) != len(h.NICs) || nd.Links[0].MAC != h.NICs[0].MAC {
			t.Errorf("networkData Secret %s: %s", ndSecret.Name, ndSecret.Data["networkData"])
		}
		if h.NICs[0].IP != "" && (len(nd.Networks) != 1 || !strings.HasPrefix(h.NICs[0].IP, nd.Networks[0].Address+"/")) {
			t.Errorf("networkData networks %+v, want %s", nd.Networks, h.NICs[0].IP)
		}
		if bmh.APIVersion != "metal3.io/v1alpha1" || bmh.Kind != "BareMetalHost" || bmh.Name != h.Name || bmh.Namespace != "metal3" {
			t.Errorf("BareMetalHost %s/%s %s", bmh.Namespace, bmh.Name, bmh.Kind)
		}
		spec := bmh.Spec
		if spec.Online || spec.BootMACAddress != h.NICs[0].MAC || spec.BMC.CredentialsName != bmcSecret.Name || spec.BMC.Address != s.Address(h.Name) ||
			spec.NetworkData == nil || spec.NetworkData.Name != ndSecret.Name || bmh.Labels["rack"] != h.Labels["rack"] {
			t.Errorf("BareMetalHost %s spec %+v labels %v", h.Name, spec, bmh.Labels)
		}
		access, err := bmc.Parse(spec.BMC.Address)
		if err != nil || !access.VirtualMedia() || access.Endpoint != s.BaseURL() || access.SystemPath != systemsPath+"/"+h.Name {
			t.Errorf("address %s parses to %+v, %v", spec.BMC.Address, access, err)
		}
	}
}
