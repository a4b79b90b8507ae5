package data

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
)

// PoolAddress is what a claim got from a pool.
type PoolAddress struct {
	Address    string   `json:"address"`
	Prefix     int      `json:"prefix,omitempty"`
	Gateway    string   `json:"gateway,omitempty"`
	DNSServers []string `json:"dnsServers,omitempty"`
}

// Input is everything a rendering reads.
type Input struct {
	// Template is the Metal3DataTemplate's spec.
	Template *infrav1.Metal3DataTemplateSpec
	// Namespace and Index are the Metal3Data's.
	Namespace string
	Index     int
	// Metal3Machine and Machine are read for their name, labels and
	// annotations only.
	Metal3Machine metav1.Object
	Machine       metav1.Object
	// Host is the Metal3Machine's BareMetalHost.
	Host *metal3v1alpha1.BareMetalHost
	// Pools are the addresses allocated, by pool name.
	Pools map[string]PoolAddress
}

// macPattern is the form a rendered MAC address must have.
var macPattern = regexp.MustCompile(`^([0-9A-Fa-f]{2}[:-]){5}([0-9A-Fa-f]{2})$`)

// RenderMetaData renders spec.metaData of the template as upstream does: a
// YAML mapping of every key, plus providerid
// (<namespace>/<host>/<Metal3Machine>). A template without metaData renders
// nothing (nil). Where one key is set twice, the later item group wins, in
// the order fromHostInterfaces, ipAddressesFromIPPool, prefixesFromIPPool,
// gatewaysFromIPPool, indexes, namespaces, objectNames, fromLabels,
// fromAnnotations, strings.
func RenderMetaData(in Input) ([]byte, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	md := in.Template.MetaData
	if md == nil {
		return nil, nil
	}
	out := map[string]string{}
	for i, e := range md.FromHostInterfaces {
		field := fmt.Sprintf("spec.metaData.fromHostInterfaces[%d]", i)
		if e.FromBootMAC {
			if in.Host.Spec.BootMACAddress == "" {
				return nil, fmt.Errorf("%s.fromBootMAC: BareMetalHost %s has no spec.bootMACAddress", field, hostKey(in.Host))
			}
			out[e.Key] = in.Host.Spec.BootMACAddress
			continue
		}
		mac, err := hostMAC(in.Host, e.Interface)
		if err != nil {
			return nil, fmt.Errorf("%s.interface: %w", field, err)
		}
		out[e.Key] = mac
	}
	for _, g := range []struct {
		field string
		items []infrav1.FromPool
		value func(PoolAddress) string
	}{
		{"ipAddressesFromIPPool", md.IPAddressesFromPool, func(p PoolAddress) string { return p.Address }},
		{"prefixesFromIPPool", md.PrefixesFromPool, func(p PoolAddress) string { return strconv.Itoa(p.Prefix) }},
		{"gatewaysFromIPPool", md.GatewaysFromPool, func(p PoolAddress) string { return p.Gateway }},
	} {
		for i, e := range g.items {
			p, err := in.pool(e.Name)
			if err != nil {
				return nil, fmt.Errorf("spec.metaData.%s[%d].name: %w", g.field, i, err)
			}
			out[e.Key] = g.value(p)
		}
	}
	for _, e := range md.Indexes {
		step := e.Step
		if step == 0 {
			step = 1
		}
		out[e.Key] = e.Prefix + strconv.Itoa(e.Offset+in.Index*step) + e.Suffix
	}
	for _, e := range md.Namespaces {
		out[e.Key] = in.Namespace
	}
	for i, e := range md.ObjectNames {
		o, err := in.object(e.Object)
		if err != nil {
			return nil, fmt.Errorf("spec.metaData.objectNames[%d].object: %w", i, err)
		}
		out[e.Key] = o.GetName()
	}
	for i, e := range md.FromLabels {
		o, err := in.object(e.Object)
		if err != nil {
			return nil, fmt.Errorf("spec.metaData.fromLabels[%d].object: %w", i, err)
		}
		out[e.Key] = o.GetLabels()[e.Label]
	}
	for i, e := range md.FromAnnotations {
		o, err := in.object(e.Object)
		if err != nil {
			return nil, fmt.Errorf("spec.metaData.fromAnnotations[%d].object: %w", i, err)
		}
		out[e.Key] = o.GetAnnotations()[e.Annotation]
	}
	for _, e := range md.Strings {
		out[e.Key] = e.Value
	}
	out["providerid"] = in.Metal3Machine.GetNamespace() + "/" + in.Host.GetName() + "/" + in.Metal3Machine.GetName()
	return yaml.Marshal(out)
}

// RenderNetworkData renders spec.networkData of the template as upstream
// does, in the OpenStack network_data.json form (links, networks,
// services) written as YAML. A template without networkData renders
// nothing (nil).
func RenderNetworkData(in Input) ([]byte, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	nd := in.Template.NetworkData
	if nd == nil {
		return nil, nil
	}
	links, err := in.links(nd.Links)
	if err != nil {
		return nil, err
	}
	networks, err := in.networks(nd.Networks)
	if err != nil {
		return nil, err
	}
	services, err := in.dnsServices("spec.networkData.services", strs(nd.Services.DNS), nd.Services.DNSFromIPPool)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(map[string][]any{"links": links, "networks": networks, "services": services})
}

// links renders bonds, then ethernets, then VLANs, as upstream orders them.
func (in Input) links(l infrav1.NetworkDataLink) ([]any, error) {
	out := []any{}
	for i, b := range l.Bonds {
		field := fmt.Sprintf("spec.networkData.links.bonds[%d]", i)
		e := map[string]any{
			"type":                  "bond",
			"id":                    b.ID,
			"mtu":                   b.MTU,
			"bond_mode":             b.BondMode,
			"bond_xmit_hash_policy": b.BondXmitHashPolicy,
			"bond_links":            b.BondLinks,
		}
		if err := in.linkCommon(e, field, b.Name, b.MACAddress, "ethernet_mac_address"); err != nil {
			return nil, err
		}
		var clash []string
		for name, v := range b.Parameters {
			k := "bond_" + name
			if _, set := e[k]; set {
				clash = append(clash, name)
				continue
			}
			e[k] = v
		}
		if len(clash) > 0 {
			return nil, fmt.Errorf("%s.parameters: %s would replace a setting given by a field", field, strings.Join(slices.Sorted(slices.Values(clash)), ", "))
		}
		out = append(out, e)
	}
	for i, eth := range l.Ethernets {
		e := map[string]any{"type": eth.Type, "id": eth.ID, "mtu": eth.MTU}
		if err := in.linkCommon(e, fmt.Sprintf("spec.networkData.links.ethernets[%d]", i), eth.Name, eth.MACAddress, "ethernet_mac_address"); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	for i, v := range l.Vlans {
		e := map[string]any{"type": "vlan", "id": v.ID, "mtu": v.MTU, "vlan_id": v.VlanID, "vlan_link": v.VlanLink}
		if err := in.linkCommon(e, fmt.Sprintf("spec.networkData.links.vlans[%d]", i), v.Name, v.MACAddress, "vlan_mac_address"); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// linkCommon adds a link's optional name and MAC address.
func (in Input) linkCommon(e map[string]any, field, name string, mac *infrav1.NetworkLinkEthernetMac, macKey string) error {
	if name != "" {
		e["name"] = name
	}
	if mac == nil {
		return nil
	}
	var v string
	var err error
	switch {
	case mac.String != nil:
		v = *mac.String
		field += ".macAddress.string"
	case mac.FromHostInterface != nil:
		field += ".macAddress.fromHostInterface"
		v, err = hostMAC(in.Host, *mac.FromHostInterface)
	case mac.FromAnnotation != nil:
		field += ".macAddress.fromAnnotation"
		var o metav1.Object
		if o, err = in.object(mac.FromAnnotation.Object); err == nil {
			v = o.GetAnnotations()[mac.FromAnnotation.Annotation]
		}
	default:
		field += ".macAddress"
	}
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	if !macPattern.MatchString(v) {
		return fmt.Errorf("%s: %q is not a MAC address", field, v)
	}
	e[macKey] = v
	return nil
}

// networks renders static IPv4, static IPv6, IPv4 DHCP, IPv6 DHCP and IPv6
// SLAAC networks, in that order.
func (in Input) networks(n infrav1.NetworkDataNetwork) ([]any, error) {
	out := []any{}
	for i, nw := range n.IPv4 {
		field := fmt.Sprintf("spec.networkData.networks.ipv4[%d]", i)
		e, err := in.static("ipv4", field, nw.ID, nw.Link, nw.FromPoolAnnotation, refName(nw.FromPoolRef), nw.IPAddressFromIPPool, 32)
		if err != nil {
			return nil, err
		}
		if e["routes"], err = in.routesv4(field, nw.Routes); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	for i, nw := range n.IPv6 {
		field := fmt.Sprintf("spec.networkData.networks.ipv6[%d]", i)
		e, err := in.static("ipv6", field, nw.ID, nw.Link, nw.FromPoolAnnotation, refName(nw.FromPoolRef), nw.IPAddressFromIPPool, 128)
		if err != nil {
			return nil, err
		}
		if e["routes"], err = in.routesv6(field, nw.Routes); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	for i, nw := range n.IPv4DHCP {
		routes, err := in.routesv4(fmt.Sprintf("spec.networkData.networks.ipv4DHCP[%d]", i), nw.Routes)
		if err != nil {
			return nil, err
		}
		out = append(out, map[string]any{"type": "ipv4_dhcp", "id": nw.ID, "link": nw.Link, "routes": routes})
	}
	for _, g := range []struct {
		typ, field string
		nets       []infrav1.NetworkDataIPv6DHCP
	}{{"ipv6_dhcp", "ipv6DHCP", n.IPv6DHCP}, {"ipv6_slaac", "ipv6SLAAC", n.IPv6SLAAC}} {
		for i, nw := range g.nets {
			routes, err := in.routesv6(fmt.Sprintf("spec.networkData.networks.%s[%d]", g.field, i), nw.Routes)
			if err != nil {
				return nil, err
			}
			out = append(out, map[string]any{"type": g.typ, "id": nw.ID, "link": nw.Link, "routes": routes})
		}
	}
	return out, nil
}

// static renders a network with an address from a pool, named by the
// first of an annotation, a pool reference or a pool name.
func (in Input) static(typ, field, id, link string, ann *infrav1.FromPoolAnnotation, refName, poolName string, bits int) (map[string]any, error) {
	name, nameField, err := in.poolName(field, ann, refName, poolName, "ipAddressFromIPPool")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", nameField, err)
	}
	p, err := in.pool(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", nameField, err)
	}
	mask, err := netmask(p.Prefix, bits)
	if err != nil {
		return nil, fmt.Errorf("%s: IPPool %s: %w", nameField, name, err)
	}
	return map[string]any{"type": typ, "id": id, "link": link, "netmask": mask, "ip_address": p.Address}, nil
}

func refName(r *corev1.TypedLocalObjectReference) string {
	if r == nil {
		return ""
	}
	return r.Name
}

// poolName resolves which pool a field names: fromPoolAnnotation, then
// fromPoolRef, then the plain name field.
func (in Input) poolName(field string, ann *infrav1.FromPoolAnnotation, refName, name, nameField string) (string, string, error) {
	switch {
	case ann != nil:
		f := field + ".fromPoolAnnotation"
		v, err := in.annotationPool(ann)
		return v, f, err
	case refName != "":
		return refName, field + ".fromPoolRef.name", nil
	default:
		return name, field + "." + nameField, nil
	}
}

// annotationPool reads a pool name from an annotation; an empty one is an
// error.
func (in Input) annotationPool(ann *infrav1.FromPoolAnnotation) (string, error) {
	o, err := in.object(ann.Object)
	if err != nil {
		return "", err
	}
	v := o.GetAnnotations()[ann.Annotation]
	if v == "" {
		return "", fmt.Errorf("%s %s has no annotation %s naming a pool", ann.Object, o.GetName(), ann.Annotation)
	}
	return v, nil
}

type route struct {
	network  string
	prefix   int
	gateway  func() (string, error)
	dns      []string
	dnsPool  *string
	gwField  string
	svcField string
}

func (in Input) routesv4(field string, rs []infrav1.NetworkDataRoutev4) ([]any, error) {
	conv := make([]route, len(rs))
	for i, r := range rs {
		conv[i] = in.routeAt(fmt.Sprintf("%s.routes[%d]", field, i), string(r.Network), r.Prefix, (*string)(r.Gateway.String),
			r.Gateway.FromPoolAnnotation, r.Gateway.FromPoolRef, r.Gateway.FromIPPool, strs(r.Services.DNS), r.Services.DNSFromIPPool)
	}
	return in.routes(conv, 32)
}

func (in Input) routesv6(field string, rs []infrav1.NetworkDataRoutev6) ([]any, error) {
	conv := make([]route, len(rs))
	for i, r := range rs {
		conv[i] = in.routeAt(fmt.Sprintf("%s.routes[%d]", field, i), string(r.Network), r.Prefix, (*string)(r.Gateway.String),
			r.Gateway.FromPoolAnnotation, r.Gateway.FromPoolRef, r.Gateway.FromIPPool, strs(r.Services.DNS), r.Services.DNSFromIPPool)
	}
	return in.routes(conv, 128)
}

// routeAt is the route at field f of either family: the v4 and v6 API
// types hold the same fields, each with its own address type, so one
// place decides where a gateway comes from. The gateway is the literal
// gw when set, else the gateway of the pool the other three name.
func (in Input) routeAt(f, network string, prefix int, gw *string, ann *infrav1.FromPoolAnnotation, ref *corev1.TypedLocalObjectReference, pool *string, dns []string, dnsPool *string) route {
	return route{
		network: network, prefix: prefix, dns: dns, dnsPool: dnsPool,
		gwField: f + ".gateway", svcField: f + ".services",
		gateway: func() (string, error) {
			if gw != nil {
				return *gw, nil
			}
			return in.gatewayFromPool(f+".gateway", ann, ref, pool)
		},
	}
}

// gatewayFromPool is the gateway of the pool named by the first of an
// annotation, a pool reference or a pool name; none renders as "".
func (in Input) gatewayFromPool(field string, ann *infrav1.FromPoolAnnotation, ref *corev1.TypedLocalObjectReference, name *string) (string, error) {
	var pool, poolField string
	switch {
	case ann != nil:
		v, err := in.annotationPool(ann)
		if err != nil {
			return "", fmt.Errorf("%s.fromPoolAnnotation: %w", field, err)
		}
		pool, poolField = v, field+".fromPoolAnnotation"
	case ref != nil && ref.Name != "":
		pool, poolField = ref.Name, field+".fromPoolRef.name"
	case name != nil:
		pool, poolField = *name, field+".fromIPPool"
	default:
		return "", nil
	}
	p, err := in.pool(pool)
	if err != nil {
		return "", fmt.Errorf("%s: %w", poolField, err)
	}
	return p.Gateway, nil
}

func (in Input) routes(rs []route, bits int) ([]any, error) {
	out := []any{}
	for _, r := range rs {
		gw, err := r.gateway()
		if err != nil {
			return nil, err
		}
		services, err := in.dnsServices(r.svcField, r.dns, r.dnsPool)
		if err != nil {
			return nil, err
		}
		mask, err := netmask(r.prefix, bits)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strings.TrimSuffix(r.gwField, ".gateway")+".prefix", err)
		}
		out = append(out, map[string]any{"network": r.network, "netmask": mask, "gateway": gw, "services": services})
	}
	return out, nil
}

// dnsServices renders the DNS servers given, then those of a pool.
func (in Input) dnsServices(field string, dns []string, pool *string) ([]any, error) {
	out := []any{}
	for _, d := range dns {
		out = append(out, map[string]any{"type": "dns", "address": d})
	}
	if pool != nil {
		p, err := in.pool(*pool)
		if err != nil {
			return nil, fmt.Errorf("%s.dnsFromIPPool: %w", field, err)
		}
		for _, d := range p.DNSServers {
			out = append(out, map[string]any{"type": "dns", "address": d})
		}
	}
	return out, nil
}

func strs[S ~string](in []S) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = string(v)
	}
	return out
}

// netmask writes a prefix length as a mask: dotted for IPv4, an IPv6
// address for IPv6.
func netmask(prefix, bits int) (string, error) {
	if prefix < 0 || prefix > bits {
		return "", fmt.Errorf("prefix %d is not between 0 and %d", prefix, bits)
	}
	return net.IP(net.CIDRMask(prefix, bits)).String(), nil
}

// pool is the address allocated from the named pool.
func (in Input) pool(name string) (PoolAddress, error) {
	p, ok := in.Pools[name]
	if !ok {
		return PoolAddress{}, fmt.Errorf("no address allocated from IPPool %s", name)
	}
	return p, nil
}

// object is the Machine, Metal3Machine or BareMetalHost, as the object
// field of an item names it.
func (in Input) object(kind string) (metav1.Object, error) {
	var o metav1.Object
	switch strings.ToLower(kind) {
	case infrav1.DataObjectMetal3Machine:
		o = in.Metal3Machine
	case infrav1.DataObjectMachine:
		o = in.Machine
	case infrav1.DataObjectHost:
		if in.Host != nil {
			o = in.Host
		}
	default:
		return nil, fmt.Errorf("unknown object %q: one of machine, metal3machine, baremetalhost", kind)
	}
	if o == nil {
		return nil, fmt.Errorf("no %s to read", kind)
	}
	return o, nil
}

// hostMAC is the MAC address of the host's NIC of that name.
func hostMAC(h *metal3v1alpha1.BareMetalHost, name string) (string, error) {
	if h == nil || h.Status.HardwareDetails == nil || len(h.Status.HardwareDetails.NIC) == 0 {
		return "", fmt.Errorf("BareMetalHost %s has no NICs in status.hardware (not inspected yet)", hostKey(h))
	}
	for _, n := range h.Status.HardwareDetails.NIC {
		if n.Name == name {
			return n.MAC, nil
		}
	}
	return "", fmt.Errorf("BareMetalHost %s has no NIC named %q", hostKey(h), name)
}

func hostKey(h *metal3v1alpha1.BareMetalHost) string {
	if h == nil {
		return "<none>"
	}
	return h.Namespace + "/" + h.Name
}

// check reports an Input that cannot be rendered.
func (in Input) check() error {
	switch {
	case in.Template == nil:
		return errors.New("no Metal3DataTemplate to render")
	case in.Metal3Machine == nil:
		return errors.New("no Metal3Machine to render for")
	case in.Host == nil:
		return errors.New("no BareMetalHost to render for")
	case in.Machine == nil:
		return errors.New("no Machine to render for")
	}
	return nil
}
