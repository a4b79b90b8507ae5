package emulator

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/configdrive"
)

// driveData is what a host makes of a config drive's meta-data and
// user-data when it boots from it (a disk's, or a live ISO that is one).
type driveData struct {
	// meta is the meta-data (nil when there is none or it is unreadable).
	meta map[string]any
	// boot is the kubeadm bootstrap of the user-data; nil with bootErr
	// saying why, or nil with no user-data.
	boot    *kubeadmBoot
	bootErr error
	// notes are what the host would complain about, for the log.
	notes []string
}

// readDriveData reads a config drive's meta-data (JSON, or YAML) and
// user-data (a #cloud-config running kubeadm). What it cannot use it
// notes, without quoting the data.
func readDriveData(c configdrive.Data) *driveData {
	d := &driveData{}
	if len(c.MetaData) > 0 {
		if err := yaml.Unmarshal(c.MetaData, &d.meta); err != nil {
			d.notes = append(d.notes, fmt.Sprintf("meta-data is neither JSON nor YAML, ignored (%d bytes)", len(c.MetaData)))
			d.meta = nil
		}
	}
	if len(c.UserData) > 0 {
		d.boot, d.bootErr = parseUserData(c.UserData, d.meta)
		if d.boot != nil {
			for _, n := range d.boot.notes {
				d.notes = append(d.notes, "user-data: "+n)
			}
		}
	}
	return d
}

// nodeFromDrive is the Node a config drive asks for, and where, as the
// host would register it when it boots:
//
//   - name: the kubeadm configuration's nodeRegistration.name (or the
//     kubelet's hostname-override), else the meta-data's local-hostname
//     (or local_hostname, hostname, then name),
//     lower-cased, else the host's name;
//   - spec.providerID: the kubelet's provider-id, else the meta-data's
//     providerid (or provider-id, providerID); maybe none;
//   - labels: the kubelet's node-labels, then the meta-data's labels;
//   - InternalIP: the kubelet's node-ip, else the first NIC's IP;
//   - cluster: see clusterFor.
//
// Called with s.mu held.
func (s *Server) nodeFromDrive(h *hostEntry, d *driveData) nodeWant {
	if d == nil {
		d = &driveData{}
	}
	for _, n := range d.notes {
		s.logger.Printf("%s: %s", h.Name, n)
	}
	want := nodeWant{name: h.Name}
	for _, n := range h.NICs {
		if n.IP != "" {
			if p, err := parseIP(n.IP); err == nil {
				want.ip = p.Addr().String()
			}
			break
		}
	}
	md := d.meta
	str := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := md[k].(string); ok && v != "" {
				return v
			}
		}
		return ""
	}
	if name := strings.ToLower(str("local-hostname", "local_hostname", "hostname", "name")); name != "" {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			s.logger.Printf("%s: meta-data local-hostname %q is not a Node name (%s); using %s", h.Name, name, strings.Join(msgs, "; "), h.Name)
		} else {
			want.name = name
		}
	}
	want.providerID = str("providerid", "provider-id", "providerID")
	labels := map[string]string{}
	if b := d.boot; b != nil {
		if b.nodeName != "" {
			want.name = b.nodeName
		}
		if b.providerID != "" {
			want.providerID = b.providerID
		}
		if b.nodeIP != "" {
			want.ip = b.nodeIP
		}
		if !b.join {
			want.kubeadmConfig = b.clusterConfig
		}
		for k, v := range b.labels {
			labels[k] = v
		}
	}
	if raw, ok := md["labels"].(map[string]any); ok {
		for k, v := range raw {
			val := fmt.Sprint(v)
			if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(val)) > 0 {
				s.logger.Printf("%s: meta-data label %q ignored: not a valid label", h.Name, k)
				continue
			}
			labels[k] = val
		}
	}
	if len(labels) > 0 {
		want.labels = labels
	}
	if want.ip != "" {
		if _, err := netip.ParseAddr(want.ip); err != nil {
			want.ip = ""
		}
	}
	want.cluster = s.clusterFor(h, d)
	return want
}

// clusterFor picks the cluster of a booting host's Node: the one its
// user-data's kubeadm configuration names (the API endpoint), when the
// user-data carries that cluster's CA (the emulator issues itself a client
// certificate) or an earlier host's did; else the target cluster, if any.
// The log says which, and why. Called with s.mu held.
func (s *Server) clusterFor(h *hostEntry, d *driveData) string {
	fallback := func(why string) string {
		if s.target == nil {
			s.logger.Printf("%s: no Node: %s, and there is no target cluster (--target-kubeconfig)", h.Name, why)
		} else if why != "" {
			s.logger.Printf("%s: Node in the target cluster: %s", h.Name, why)
		}
		return ""
	}
	b := d.boot
	switch {
	case b == nil && d.bootErr == nil:
		if s.target == nil {
			return fallback("no user-data")
		}
		return ""
	case b == nil:
		why := d.bootErr.Error()
		if errors.Is(d.bootErr, errNotCloudConfig) || errors.Is(d.bootErr, errNoKubeadm) {
			why += " (it names no cluster)"
		}
		return fallback(why)
	case b.endpoint == "":
		return fallback("the user-data's kubeadm configuration names no API server")
	}
	s.logger.Printf("%s: user-data: %s", h.Name, b.describe())
	switch {
	case b.ca != nil:
		if s.clusters.remember(b.endpoint, b.ca) {
			s.logger.Printf("%s: credentials for %s: a client certificate (group %s) from the cluster CA of the user-data", h.Name, b.endpoint, clusterGroup)
		}
		return b.endpoint
	case s.clusters.has(b.endpoint):
		s.logger.Printf("%s: joins %s with the credentials from an earlier host's cluster CA (the kubelet TLS bootstrap with a bootstrap token is not emulated)", h.Name, b.endpoint)
		return b.endpoint
	}
	return fallback(fmt.Sprintf("no credentials for %s: the user-data carries no cluster CA and no earlier host's did (a bootstrap token alone is not enough: the kubelet TLS bootstrap is not emulated)", b.endpoint))
}

// clusterName names a Node's cluster for the log.
func (s *Server) clusterName(cluster string) string {
	switch {
	case cluster != "":
		return cluster
	case s.target != nil:
		return "the target cluster"
	}
	return "no cluster"
}
