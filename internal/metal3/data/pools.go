package data

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
)

// PoolRef is a pool a template takes addresses from.
type PoolRef struct {
	Name     string
	APIGroup string
	Kind     string
	// Field is the first template field naming the pool.
	Field string
}

// IsIPPool reports whether the pool is a Metal3 IPPool, the only kind
// served here (Cluster API IPAddressClaims of other providers are not).
func (r PoolRef) IsIPPool() bool {
	return r.APIGroup == ipamv1.GroupVersion.Group && r.Kind == "IPPool"
}

// Pools lists, by name, every pool the template takes an address from.
// Pools named by annotations are resolved from in's objects. A name used
// for two kinds of pool is an error.
func Pools(in Input) (map[string]PoolRef, error) {
	p := pools{in: in, refs: map[string]PoolRef{}}
	t := in.Template
	if md := t.MetaData; md != nil {
		for _, g := range []struct {
			field string
			items []infrav1.FromPool
		}{
			{"ipAddressesFromIPPool", md.IPAddressesFromPool},
			{"prefixesFromIPPool", md.PrefixesFromPool},
			{"gatewaysFromIPPool", md.GatewaysFromPool},
			{"dnsServersFromIPPool", md.DNSServersFromPool},
		} {
			for i, e := range g.items {
				if err := p.add(PoolRef{Name: e.Name, APIGroup: e.APIGroup, Kind: e.Kind, Field: fmt.Sprintf("spec.metaData.%s[%d]", g.field, i)}); err != nil {
					return nil, err
				}
			}
		}
	}
	nd := t.NetworkData
	if nd == nil {
		return p.refs, nil
	}
	for i, n := range nd.Networks.IPv4 {
		field := fmt.Sprintf("spec.networkData.networks.ipv4[%d]", i)
		if err := p.network(field, n.FromPoolAnnotation, n.FromPoolRef, n.IPAddressFromIPPool); err != nil {
			return nil, err
		}
		for j, r := range n.Routes {
			if err := p.route(fmt.Sprintf("%s.routes[%d]", field, j), r.Gateway.FromPoolAnnotation, r.Gateway.FromPoolRef, r.Gateway.FromIPPool, r.Services.DNSFromIPPool); err != nil {
				return nil, err
			}
		}
	}
	for i, n := range nd.Networks.IPv6 {
		field := fmt.Sprintf("spec.networkData.networks.ipv6[%d]", i)
		if err := p.network(field, n.FromPoolAnnotation, n.FromPoolRef, n.IPAddressFromIPPool); err != nil {
			return nil, err
		}
		for j, r := range n.Routes {
			if err := p.route(fmt.Sprintf("%s.routes[%d]", field, j), r.Gateway.FromPoolAnnotation, r.Gateway.FromPoolRef, r.Gateway.FromIPPool, r.Services.DNSFromIPPool); err != nil {
				return nil, err
			}
		}
	}
	for i, n := range nd.Networks.IPv4DHCP {
		for j, r := range n.Routes {
			if err := p.route(fmt.Sprintf("spec.networkData.networks.ipv4DHCP[%d].routes[%d]", i, j), r.Gateway.FromPoolAnnotation, r.Gateway.FromPoolRef, r.Gateway.FromIPPool, r.Services.DNSFromIPPool); err != nil {
				return nil, err
			}
		}
	}
	for _, g := range []struct {
		field string
		nets  []infrav1.NetworkDataIPv6DHCP
	}{{"ipv6DHCP", nd.Networks.IPv6DHCP}, {"ipv6SLAAC", nd.Networks.IPv6SLAAC}} {
		for i, n := range g.nets {
			for j, r := range n.Routes {
				if err := p.route(fmt.Sprintf("spec.networkData.networks.%s[%d].routes[%d]", g.field, i, j), r.Gateway.FromPoolAnnotation, r.Gateway.FromPoolRef, r.Gateway.FromIPPool, r.Services.DNSFromIPPool); err != nil {
					return nil, err
				}
			}
		}
	}
	if n := nd.Services.DNSFromIPPool; n != nil {
		if err := p.add(PoolRef{Name: *n, Field: "spec.networkData.services.dnsFromIPPool"}); err != nil {
			return nil, err
		}
	}
	return p.refs, nil
}

type pools struct {
	in   Input
	refs map[string]PoolRef
}

// add records a pool, its group and kind defaulting to ipam.metal3.io
// IPPool.
func (p *pools) add(r PoolRef) error {
	if r.Name == "" {
		return nil
	}
	if r.APIGroup == "" {
		r.APIGroup = ipamv1.GroupVersion.Group
	}
	if r.Kind == "" {
		r.Kind = "IPPool"
	}
	old, ok := p.refs[r.Name]
	if !ok {
		p.refs[r.Name] = r
		return nil
	}
	if old.APIGroup != r.APIGroup || old.Kind != r.Kind {
		return fmt.Errorf("%s: pool %s is a %s.%s here and a %s.%s in %s", r.Field, r.Name, r.Kind, r.APIGroup, old.Kind, old.APIGroup, old.Field)
	}
	return nil
}

// network records the pool of a static network: the first of an
// annotation, a reference and a name.
func (p *pools) network(field string, ann *infrav1.FromPoolAnnotation, ref *corev1.TypedLocalObjectReference, name string) error {
	switch {
	case ann != nil:
		n, err := p.in.annotationPool(ann)
		if err != nil {
			return fmt.Errorf("%s.fromPoolAnnotation: %w", field, err)
		}
		return p.add(PoolRef{Name: n, Field: field + ".fromPoolAnnotation"})
	case ref != nil && ref.Name != "":
		return p.add(PoolRef{Name: ref.Name, APIGroup: deref(ref.APIGroup), Kind: ref.Kind, Field: field + ".fromPoolRef"})
	default:
		return p.add(PoolRef{Name: name, Field: field + ".ipAddressFromIPPool"})
	}
}

// route records the pools of a route's gateway and DNS servers.
func (p *pools) route(field string, ann *infrav1.FromPoolAnnotation, ref *corev1.TypedLocalObjectReference, name, dns *string) error {
	gw := field + ".gateway"
	var err error
	switch {
	case ann != nil:
		var n string
		if n, err = p.in.annotationPool(ann); err != nil {
			return fmt.Errorf("%s.fromPoolAnnotation: %w", gw, err)
		}
		err = p.add(PoolRef{Name: n, Field: gw + ".fromPoolAnnotation"})
	case ref != nil && ref.Name != "":
		err = p.add(PoolRef{Name: ref.Name, APIGroup: deref(ref.APIGroup), Kind: ref.Kind, Field: gw + ".fromPoolRef"})
	case name != nil:
		err = p.add(PoolRef{Name: *name, Field: gw + ".fromIPPool"})
	}
	if err != nil {
		return err
	}
	if dns != nil {
		return p.add(PoolRef{Name: *dns, Field: field + ".services.dnsFromIPPool"})
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
