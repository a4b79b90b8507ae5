package netdata

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// SecretKey is the key of the networkData Secret that holds the document.
const SecretKey = "networkData"

// document is the part of network_data.json read here.
type document struct {
	Links []struct {
		ID string `json:"id"`
	} `json:"links"`
	Networks []struct {
		ID   string `json:"id"`
		Link string `json:"link"`
		IP   string `json:"ip_address"`
	} `json:"networks"`
}

// Addresses maps network ids and link ids to the network's IP address.
type Addresses map[string]string

// Parse reads a networkData document. A network without an address (DHCP)
// is left out; an address that is not an IP is an error naming the network.
func Parse(data []byte) (Addresses, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, errors.New("networkData is empty")
	}
	var d document
	if err := yaml.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("networkData is not a network_data.json document: %w", err)
	}
	out := Addresses{}
	for i, n := range d.Networks {
		if n.IP == "" {
			continue
		}
		ip := n.IP
		if p, err := netip.ParsePrefix(ip); err == nil {
			ip = p.Addr().String()
		}
		addr, err := netip.ParseAddr(ip)
		if err != nil {
			return nil, fmt.Errorf("networkData networks[%d] (id %q): ip_address %q is not an IP address", i, clip(n.ID), clip(n.IP))
		}
		if n.ID != "" {
			if _, dup := out[n.ID]; !dup {
				out[n.ID] = addr.String()
			}
		}
		if n.Link != "" {
			if _, dup := out[n.Link]; !dup {
				out[n.Link] = addr.String()
			}
		}
	}
	return out, nil
}

// maxQuoted bounds a value of the document quoted in an error: the error
// becomes a condition message, which has a size limit.
const maxQuoted = 100

// clip cuts s to maxQuoted bytes (at a rune boundary), marking the cut.
func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
