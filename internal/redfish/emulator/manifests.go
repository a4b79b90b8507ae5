package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Names of a host's Secrets.
func BMCSecretName(host string) string         { return host + "-bmc-secret" }
func NetworkDataSecretName(host string) string { return host + "-network-data" }

// WriteManifests writes, for each host of a started server, the
// manifests a site adopts it with, as one YAML stream: the BMC Secret
// (<host>-bmc-secret, keys username and password), the networkData
// Secret (<host>-network-data, key networkData) and the BareMetalHost
// (metal3.io/v1alpha1; spec.bmc.address from Address, bootMACAddress the
// first NIC's, online false, the host's labels). namespace may be empty.
func WriteManifests(w io.Writer, s *Server, namespace string) error {
	if s.BaseURL() == "" {
		return errors.New("writing manifests: the emulator is not started, so hosts have no address yet")
	}
	for i, h := range s.hosts {
		user, password, _ := s.Credentials(h.Name)
		objs := []runtime.Object{
			bmcSecret(h.Name, namespace, user, password),
			networkDataSecret(h, namespace),
			bareMetalHost(h, namespace, s.Address(h.Name)),
		}
		for j, o := range objs {
			if i > 0 || j > 0 {
				if _, err := io.WriteString(w, "---\n"); err != nil {
					return fmt.Errorf("writing manifests: %w", err)
				}
			}
			data, err := manifestYAML(o)
			if err != nil {
				return fmt.Errorf("manifests of %s: %w", h.Name, err)
			}
			if _, err := w.Write(data); err != nil {
				return fmt.Errorf("writing manifests: %w", err)
			}
		}
	}
	return nil
}

// manifestYAML renders an object without its status and empty creation
// timestamp: what one writes to apply.
func manifestYAML(o runtime.Object) ([]byte, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	delete(u, "status")
	if md, ok := u["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	return yaml.Marshal(u)
}

func objectMeta(name, namespace string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: copyMap(labels)}
}

func bmcSecret(host, namespace, user, password string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: objectMeta(BMCSecretName(host), namespace, nil),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"username": []byte(user), "password": []byte(password)},
	}
}

// networkDataSecret holds the host's network in the OpenStack
// network_data.json form cloud-init reads: a link per NIC, a network per
// NIC with an address.
func networkDataSecret(h *hostEntry, namespace string) *corev1.Secret {
	type link struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		MAC  string `json:"ethernet_mac_address"`
	}
	type network struct {
		ID      string `json:"id"`
		Link    string `json:"link"`
		Type    string `json:"type"`
		Address string `json:"ip_address"`
		Netmask string `json:"netmask,omitempty"`
		Prefix  int    `json:"prefix,omitempty"`
	}
	nd := struct {
		Links    []link    `json:"links"`
		Networks []network `json:"networks"`
		Services []any     `json:"services"`
	}{Links: []link{}, Networks: []network{}, Services: []any{}}
	for _, n := range h.NICs {
		nd.Links = append(nd.Links, link{ID: n.Name, Type: "phy", MAC: n.MAC})
		if n.IP == "" {
			continue
		}
		p, err := parseIP(n.IP)
		if err != nil {
			continue
		}
		net := network{ID: n.Name + "-net", Link: n.Name, Address: p.Addr().String()}
		if p.Addr().Is4() {
			net.Type, net.Netmask = "ipv4", netmask(p.Bits())
		} else {
			net.Type, net.Prefix = "ipv6", p.Bits()
		}
		nd.Networks = append(nd.Networks, net)
	}
	data, _ := json.MarshalIndent(nd, "", "  ")
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: objectMeta(NetworkDataSecretName(h.Name), namespace, nil),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"networkData": append(data, '\n')},
	}
}

func bareMetalHost(h *hostEntry, namespace, address string) *metal3v1alpha1.BareMetalHost {
	return &metal3v1alpha1.BareMetalHost{
		TypeMeta:   metav1.TypeMeta{APIVersion: metal3v1alpha1.GroupVersion.String(), Kind: "BareMetalHost"},
		ObjectMeta: objectMeta(h.Name, namespace, h.Labels),
		Spec: metal3v1alpha1.BareMetalHostSpec{
			Online:         false,
			BootMACAddress: h.NICs[0].MAC,
			BMC: metal3v1alpha1.BMCDetails{
				Address:         address,
				CredentialsName: BMCSecretName(h.Name),
			},
			NetworkData: &corev1.SecretReference{Name: NetworkDataSecretName(h.Name), Namespace: namespace},
		},
	}
}
