package ipam

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/netip"
	"strings"

	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
)

// ErrExhausted is wrapped by the error of a pool with no free address.
var ErrExhausted = errors.New("exhausted")

// Range is one entry of spec.pools resolved to its first and last address,
// both included. An empty range has First after Last.
type Range struct {
	// Index is the entry's position in spec.pools.
	Index int
	// First and Last bound the range.
	First, Last netip.Addr
	// Prefix, Gateway and DNSServers are what an address of the range is
	// given: the entry's own, or the pool's.
	Prefix     int
	Gateway    *ipamv1.IPAddressStr
	DNSServers []ipamv1.IPAddressStr
}

// Empty reports whether the range holds no address.
func (r Range) Empty() bool { return !r.First.IsValid() || r.First.Compare(r.Last) > 0 }

// Contains reports whether a is in the range.
func (r Range) Contains(a netip.Addr) bool {
	return !r.Empty() && a.BitLen() == r.First.BitLen() && r.First.Compare(a) <= 0 && a.Compare(r.Last) <= 0
}

// String is the range as first-last.
func (r Range) String() string {
	if r.Empty() {
		return "empty"
	}
	return r.First.String() + "-" + r.Last.String()
}

// ParseAddr parses an address of the API, IPv4-mapped IPv6 addresses
// unmapped so one address has one form.
func ParseAddr(s ipamv1.IPAddressStr) (netip.Addr, error) {
	a, err := netip.ParseAddr(string(s))
	if err != nil {
		return netip.Addr{}, err
	}
	return a.Unmap(), nil
}

// Ranges resolves spec.pools. A range starts at start, or at the address
// after the subnet's network address; it ends at end, at the subnet's last
// address, or at the last address of its family, whichever comes first.
// Upstream ignores end when start is not given; here it always bounds the
// range, so an address the user left out is never given.
func Ranges(spec ipamv1.IPPoolSpec) ([]Range, error) {
	out := make([]Range, 0, len(spec.Pools))
	for i, p := range spec.Pools {
		field := fmt.Sprintf("spec.pools[%d]", i)
		r := Range{Index: i, Prefix: spec.Prefix, Gateway: spec.Gateway, DNSServers: spec.DNSServers}
		if p.Prefix != 0 {
			r.Prefix = p.Prefix
		}
		if p.Gateway != nil {
			r.Gateway = p.Gateway
		}
		if len(p.DNSServers) > 0 {
			r.DNSServers = p.DNSServers
		}
		var subnet netip.Prefix
		if p.Subnet != nil {
			s, err := netip.ParsePrefix(string(*p.Subnet))
			if err != nil {
				return nil, fmt.Errorf("%s.subnet: %w", field, err)
			}
			if s.Addr().Is4In6() && s.Bits() >= 96 {
				s = netip.PrefixFrom(s.Addr().Unmap(), s.Bits()-96)
			}
			subnet = s.Masked()
		}
		switch {
		case p.Start != nil:
			a, err := ParseAddr(*p.Start)
			if err != nil {
				return nil, fmt.Errorf("%s.start: %w", field, err)
			}
			if subnet.IsValid() && !subnet.Contains(a) {
				return nil, fmt.Errorf("%s.start %s is outside %s.subnet %s", field, a, field, subnet)
			}
			r.First = a
		case subnet.IsValid():
			r.First = subnet.Addr().Next()
		default:
			return nil, fmt.Errorf("%s: one of start and subnet is required", field)
		}
		r.Last = lastOfFamily(r.First)
		if subnet.IsValid() {
			r.Last = minAddr(r.Last, lastOfPrefix(subnet))
		}
		if p.End != nil {
			a, err := ParseAddr(*p.End)
			if err != nil {
				return nil, fmt.Errorf("%s.end: %w", field, err)
			}
			if a.BitLen() != r.First.BitLen() {
				return nil, fmt.Errorf("%s.end %s is not of the family of the range's start %s", field, a, r.First)
			}
			r.Last = minAddr(r.Last, a)
		}
		out = append(out, r)
	}
	return out, nil
}

func minAddr(a, b netip.Addr) netip.Addr {
	if b.Compare(a) < 0 {
		return b
	}
	return a
}

func lastOfFamily(a netip.Addr) netip.Addr {
	if a.Is4() {
		return netip.AddrFrom4([4]byte{255, 255, 255, 255})
	}
	var b [16]byte
	for i := range b {
		b[i] = 0xff
	}
	return netip.AddrFrom16(b)
}

func lastOfPrefix(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for bit := p.Bits(); bit < len(b)*8; bit++ {
		b[bit/8] |= 0x80 >> (bit % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// Pool is what Allocate needs of an IPPool.
type Pool struct {
	// Key names the pool in errors: namespace/name.
	Key string
	// Spec is the pool's spec.
	Spec ipamv1.IPPoolSpec
	// Rand picks addresses for the random strategy; nil uses a generator
	// of its own.
	Rand *rand.Rand
}

// Request is one claim's request.
type Request struct {
	// Claim is the IPClaim's name, the key of spec.preAllocations.
	Claim string
	// Address is the address the claim's ipAddress annotation asks for, if any.
	Address string
}

// Allocation is an address and its network settings.
type Allocation struct {
	Address    netip.Addr
	Prefix     int
	Gateway    *ipamv1.IPAddressStr
	DNSServers []ipamv1.IPAddressStr
	// Range is the index of the spec.pools entry the address is from.
	Range int
}

// InUse maps each address taken to the claim that holds it ("" when
// nobody holds it yet, as for a pre-allocation of a claim not seen).
type InUse map[netip.Addr]string

// free reports whether a can go to claim.
func (u InUse) free(a netip.Addr, claim string) bool {
	holder, taken := u[a]
	return !taken || holder == claim
}

// Allocate picks the address of one claim. A pre-allocated claim gets its
// address; a claim with an ipAddress annotation gets that one, if free and
// in a range; any other gets a free address of the first range that has
// one, the lowest (sequential strategy) or a random one. An error wrapping
// ErrExhausted says no address is free.
func Allocate(pool Pool, req Request, inUse InUse) (Allocation, error) {
	ranges, err := Ranges(pool.Spec)
	if err != nil {
		return Allocation{}, fmt.Errorf("IPPool %s: %w", pool.Key, err)
	}
	var want netip.Addr
	var wantFrom string
	if pre, ok := pool.Spec.PreAllocations[req.Claim]; ok {
		a, err := ParseAddr(pre)
		if err != nil {
			return Allocation{}, fmt.Errorf("IPPool %s: spec.preAllocations[%s]: %w", pool.Key, req.Claim, err)
		}
		want, wantFrom = a, fmt.Sprintf("spec.preAllocations[%s]", req.Claim)
	}
	if req.Address != "" {
		a, err := ParseAddr(ipamv1.IPAddressStr(req.Address))
		if err != nil {
			return Allocation{}, fmt.Errorf("IPClaim %s: annotation %s: %w", req.Claim, ipamv1.IPAddressAnnotation, err)
		}
		if want.IsValid() && want != a {
			return Allocation{}, fmt.Errorf("IPClaim %s: annotation %s asks for %s but IPPool %s %s is %s", req.Claim, ipamv1.IPAddressAnnotation, a, pool.Key, wantFrom, want)
		}
		want, wantFrom = a, "annotation "+ipamv1.IPAddressAnnotation
	}
	if want.IsValid() {
		return allocateWanted(pool, ranges, req.Claim, want, wantFrom, inUse)
	}
	for _, r := range ranges {
		var a netip.Addr
		var ok bool
		if pool.Spec.AllocationStrategy == ipamv1.AllocationStrategyRandom {
			a, ok = randomFree(r, req.Claim, inUse, pool.Rand)
		} else {
			a, ok = nextFree(r, r.First, req.Claim, inUse)
		}
		if ok {
			return allocation(a, r), nil
		}
	}
	spans := make([]string, 0, len(ranges))
	for _, r := range ranges {
		spans = append(spans, r.String())
	}
	return Allocation{}, fmt.Errorf("IPPool %s is %w: every address of spec.pools (%s) is allocated or pre-allocated", pool.Key, ErrExhausted, strings.Join(spans, ", "))
}

func allocateWanted(pool Pool, ranges []Range, claim string, want netip.Addr, from string, inUse InUse) (Allocation, error) {
	for _, r := range ranges {
		if !r.Contains(want) {
			continue
		}
		if !inUse.free(want, claim) {
			return Allocation{}, fmt.Errorf("IPPool %s: address %s (%s of IPClaim %s) is allocated to IPClaim %s", pool.Key, want, from, claim, inUse[want])
		}
		return allocation(want, r), nil
	}
	return Allocation{}, fmt.Errorf("IPPool %s: address %s (%s of IPClaim %s) is in none of spec.pools", pool.Key, want, from, claim)
}

// Settings are the prefix, gateway and DNS servers given with address a:
// those of the range holding it, or the pool's for an address in no range
// (the spec changed since it was given).
func Settings(spec ipamv1.IPPoolSpec, a netip.Addr) Allocation {
	if ranges, err := Ranges(spec); err == nil {
		for _, r := range ranges {
			if r.Contains(a) {
				return allocation(a, r)
			}
		}
	}
	return Allocation{Address: a, Prefix: spec.Prefix, Gateway: spec.Gateway, DNSServers: spec.DNSServers, Range: -1}
}

func allocation(a netip.Addr, r Range) Allocation {
	return Allocation{Address: a, Prefix: r.Prefix, Gateway: r.Gateway, DNSServers: r.DNSServers, Range: r.Index}
}

// nextFree is the first address from 'from' to the range's end that claim
// may take. It looks at no more addresses than are in use, plus one.
func nextFree(r Range, from netip.Addr, claim string, inUse InUse) (netip.Addr, bool) {
	if r.Empty() {
		return netip.Addr{}, false
	}
	for a := from; a.IsValid() && a.Compare(r.Last) <= 0; a = a.Next() {
		if inUse.free(a, claim) {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// randomFree starts at a random address of the range and takes the next
// free one, wrapping around at the end.
func randomFree(r Range, claim string, inUse InUse, rnd *rand.Rand) (netip.Addr, bool) {
	if r.Empty() {
		return netip.Addr{}, false
	}
	if rnd == nil {
		rnd = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	size := new(big.Int).Sub(addrInt(r.Last), addrInt(r.First))
	size.Add(size, big.NewInt(1))
	off := randBelow(rnd, size)
	start := intAddr(new(big.Int).Add(addrInt(r.First), off), r.First.Is4())
	if a, ok := nextFree(r, start, claim, inUse); ok {
		return a, true
	}
	return nextFree(Range{First: r.First, Last: start.Prev()}, r.First, claim, inUse)
}

func randBelow(rnd *rand.Rand, n *big.Int) *big.Int {
	if n.IsUint64() {
		return new(big.Int).SetUint64(rnd.Uint64N(n.Uint64()))
	}
	v := new(big.Int).SetUint64(rnd.Uint64())
	v.Lsh(v, 64)
	v.Or(v, new(big.Int).SetUint64(rnd.Uint64()))
	return v.Mod(v, n)
}

func addrInt(a netip.Addr) *big.Int { return new(big.Int).SetBytes(a.AsSlice()) }

func intAddr(v *big.Int, is4 bool) netip.Addr {
	if is4 {
		var b [4]byte
		v.FillBytes(b[:])
		return netip.AddrFrom4(b)
	}
	var b [16]byte
	v.FillBytes(b[:])
	return netip.AddrFrom16(b)
}

// AddressName is the name of the IPAddress of address a of a pool, as
// upstream forms it: <namePrefix>-<address with dots and colons as
// dashes>, trailing dashes dropped. The pool's name stands in for an empty
// namePrefix.
func AddressName(namePrefix, poolName string, a netip.Addr) string {
	if namePrefix == "" {
		namePrefix = poolName
	}
	s := strings.NewReplacer(".", "-", ":", "-").Replace(a.String())
	return strings.TrimRight(namePrefix+"-"+s, "-")
}
