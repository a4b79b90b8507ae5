package ipam

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
)

func addr(s string) *ipamv1.IPAddressStr  { a := ipamv1.IPAddressStr(s); return &a }
func subnet(s string) *ipamv1.IPSubnetStr { a := ipamv1.IPSubnetStr(s); return &a }

func inUse(pairs ...string) InUse {
	u := InUse{}
	for i := 0; i < len(pairs); i += 2 {
		u[netip.MustParseAddr(pairs[i])] = pairs[i+1]
	}
	return u
}

func TestAllocate(t *testing.T) {
	gw := addr("192.168.0.254")
	gw2 := addr("10.0.0.1")
	cases := []struct {
		name    string
		spec    ipamv1.IPPoolSpec
		req     Request
		inUse   InUse
		want    string
		prefix  int
		gateway *ipamv1.IPAddressStr
		dns     []ipamv1.IPAddressStr
		errHas  []string
		exhaust bool
	}{
		{
			name: "first address of start-end range",
			spec: ipamv1.IPPoolSpec{Prefix: 24, Gateway: gw, DNSServers: []ipamv1.IPAddressStr{"8.8.8.8"},
				Pools: []ipamv1.Pool{{Start: addr("192.168.0.10"), End: addr("192.168.0.20")}}},
			req: Request{Claim: "c"}, want: "192.168.0.10", prefix: 24, gateway: gw, dns: []ipamv1.IPAddressStr{"8.8.8.8"},
		},
		{
			name: "skips addresses in use",
			spec: ipamv1.IPPoolSpec{Pools: []ipamv1.Pool{{Start: addr("192.168.0.10"), End: addr("192.168.0.20")}}},
			req:  Request{Claim: "c"}, inUse: inUse("192.168.0.10", "a", "192.168.0.11", "b", "192.168.0.13", "d"), want: "192.168.0.12",
		},
		{
			name: "subnet only starts after the network address",
			spec: ipamv1.IPPoolSpec{Pools: []ipamv1.Pool{{Subnet: subnet("10.1.0.0/30")}}},
			req:  Request{Claim: "c"}, want: "10.1.0.1",
		},
		{
			name: "subnet only includes the last address, as upstream",
			spec: ipamv1.IPPoolSpec{Pools: []ipamv1.Pool{{Subnet: subnet("10.1.0.0/30")}}},
			req:  Request{Claim: "c"}, inUse: inUse("10.1.0.1", "a", "10.1.0.2", "b"), want: "10.1.0.3",
		},
		{
			name: "start without end runs to the subnet's end",
			spec: ipamv1.IPPoolSpec{Pools: []ipamv1.Pool{{Start: addr("10.1.0.2"), Subnet: subnet("10.1.0.0/30")}}},
			req:  Request{Claim: "c"}, inUse: inUse("10.1.0.2", "a", "10.1.0.3", "b"),
			exhaust: true, errHas: []string{"IPPool ns/pool is exhausted", "10.1.0.2-10.1.0.3"},
		},
		{
			name: "next range once the first is full, with the range's own settings",
			spec: ipamv1.IPPoolSpec{Prefix: 24, Gateway: gw, Pools: []ipamv1.Pool{
				{Start: addr("192.168.0.1"), End: addr("192.168.0.2")},
				{Start: addr("10.0.0.5"), End: addr("10.0.0.9"), Prefix: 16, Gateway: gw2, DNSServers: []ipamv1.IPAddressStr{"10.0.0.2"}},
			}},
			req: Request{Claim: "c"}, inUse: inUse("192.168.0.1", "a", "192.168.0.2", "b"),
			want: "10.0.0.5", prefix: 16, gateway: gw2, dns: []ipamv1.IPAddressStr{"10.0.0.2"},
		},
		{
			name: "pre-allocated addresses are kept for their claim",
			spec: ipamv1.IPPoolSpec{PreAllocations: map[string]ipamv1.IPAddressStr{"other": "192.168.0.1"},
				Pools: []ipamv1.Pool{{Start: addr("192.168.0.1"), End: addr("192.168.0.3")}}},
			req: Request{Claim: "c"}, inUse: inUse("192.168.0.1", ""), want: "192.168.0.2",
		},
		{
			name: "a pre-allocated claim gets its address",
			spec: ipamv1.IPPoolSpec{PreAllocations: map[string]ipamv1.IPAddressStr{"c": "192.168.0.3"},
				Pools: []ipamv1.Pool{{Start: addr("192.168.0.1"), End: addr("192.168.0.3")}}},
			req: Request{Claim: "c"}, inUse: inUse("192.168.0.3", "c"), want: "192.168.0.3",
		},
		{
			name: "a pre-allocation outside every range is an error",
			spec: ipamv1.IPPoolSpec{PreAllocations: map[string]ipamv1.IPAddressStr{"c": "192.168.1.3"},
				Pools: []ipamv1.Pool{{Start: addr("192.168.0.1"), End: addr("192.168.0.3")}}},
			req:    Request{Claim: "c"},
			errHas: []string{"192.168.1.3", "spec.preAllocations[c]", "in none of spec.pools"},
		},
		{
			name: "a pre-allocated address held by another claim is an error",
			spec: ipamv1.IPPoolSpec{PreAllocations: map[string]ipamv1.IPAddressStr{"c": "192.168.0.2"},
				Pools: []ipamv1.Pool{{Start: addr("192.168.0.1"), End: addr("192.168.0.3")}}},
			req: Request{Claim: "c"}, inUse: inUse("192.168.0.2", "old"),
			errHas: []string{"allocated to IPClaim old"},
		},
		{
			name: "annotation asks for an address",
			spec: ipamv1.IPPoolSpec{Pools: []ipamv1.Pool{{Start: addr("192.168.0.1"), End: addr("192.168.0.9")}}},
			req:  Request{Claim: "c", Address: "192.168.0.7"}, want: "192.168.0.7",
		},
		{
			name: "annotation asks for a taken address",
			spec: ipamv1.IPPoolSpec{Pools: []ipamv1.Pool{{Start: addr("192.168.0.1"), End: addr("192.168.0.9")}}},
			req:  Request{Claim: "c", Address: "192.168.0.7"}, inUse: inUse("192.168.0.7", "x"),
			errHas: []string{"192.168.0.7", "annotation ipAddress", "allocated to IPClaim x"},
		},
		{
			name: "annotation conflicting with the pre-allocation",
			spec: ipamv1.IPPoolSpec{PreAllocations: map[string]ipamv1.IPAddressStr{"c": "192.168.0.2"},
				Pools: []ipamv1.Pool{{Start: addr("192.168.0.1"), End: addr("192.168.0.9")}}},
			req:    Request{Claim: "c", Address: "192.168.0.7"},
			errHas: []string{"annotation ipAddress asks for 192.168.0.7", "spec.preAllocations[c] is 192.168.0.2"},
		},
		{
			name: "exhausted pool names the pool",
			spec: ipamv1.IPPoolSpec{Pools: []ipamv1.Pool{{Start: addr("192.168.0.1"), End: addr("192.168.0.2")}}},
			req:  Request{Claim: "c"}, inUse: inUse("192.168.0.1", "a", "192.168.0.2", "b"),
			exhaust: true, errHas: []string{"IPPool ns/pool is exhausted", "192.168.0.1-192.168.0.2"},
		},
		{
			name: "IPv6 range",
			spec: ipamv1.IPPoolSpec{Prefix: 64, Pools: []ipamv1.Pool{{Start: addr("2001:db8::ffff"), End: addr("2001:db8::1:10")}}},
			req:  Request{Claim: "c"}, inUse: inUse("2001:db8::ffff", "a"), want: "2001:db8::1:0", prefix: 64,
		},
		{
			name: "IPv6 subnet only",
			spec: ipamv1.IPPoolSpec{Pools: []ipamv1.Pool{{Subnet: subnet("fd00:1::/120")}}},
			req:  Request{Claim: "c"}, inUse: inUse("fd00:1::1", "a"), want: "fd00:1::2",
		},
		{
			name: "IPv6 non-canonical addresses compare equal",
			spec: ipamv1.IPPoolSpec{PreAllocations: map[string]ipamv1.IPAddressStr{"c": "fd00:0001:0:0::0005"},
				Pools: []ipamv1.Pool{{Subnet: subnet("fd00:1::/120")}}},
			req: Request{Claim: "c"}, want: "fd00:1::5",
		},
		{
			name: "start outside its subnet",
			spec: ipamv1.IPPoolSpec{Pools: []ipamv1.Pool{{Start: addr("10.0.0.1"), Subnet: subnet("192.168.0.0/24")}}},
			req:  Request{Claim: "c"}, errHas: []string{"spec.pools[0].start 10.0.0.1 is outside spec.pools[0].subnet 192.168.0.0/24"},
		},
		{
			name: "range without start or subnet",
			spec: ipamv1.IPPoolSpec{Pools: []ipamv1.Pool{{End: addr("10.0.0.1")}}},
			req:  Request{Claim: "c"}, errHas: []string{"spec.pools[0]: one of start and subnet is required"},
		},
		{
			name: "end of another family",
			spec: ipamv1.IPPoolSpec{Pools: []ipamv1.Pool{{Start: addr("10.0.0.1"), End: addr("fd00::1")}}},
			req:  Request{Claim: "c"}, errHas: []string{"spec.pools[0].end fd00::1 is not of the family"},
		},
		{
			name: "no ranges at all is exhaustion",
			spec: ipamv1.IPPoolSpec{},
			req:  Request{Claim: "c"}, exhaust: true, errHas: []string{"IPPool ns/pool is exhausted"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Allocate(Pool{Key: "ns/pool", Spec: tc.spec}, tc.req, tc.inUse)
			if len(tc.errHas) > 0 {
				if err == nil {
					t.Fatalf("got %s, want an error", got.Address)
				}
				for _, s := range tc.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if errors.Is(err, ErrExhausted) != tc.exhaust {
					t.Errorf("errors.Is(err, ErrExhausted) = %v, want %v", !tc.exhaust, tc.exhaust)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Address.String() != tc.want {
				t.Errorf("address = %s, want %s", got.Address, tc.want)
			}
			if got.Prefix != tc.prefix {
				t.Errorf("prefix = %d, want %d", got.Prefix, tc.prefix)
			}
			if (got.Gateway == nil) != (tc.gateway == nil) || (got.Gateway != nil && *got.Gateway != *tc.gateway) {
				t.Errorf("gateway = %v, want %v", got.Gateway, tc.gateway)
			}
			if strings.Join(strs(got.DNSServers), ",") != strings.Join(strs(tc.dns), ",") {
				t.Errorf("dns = %v, want %v", got.DNSServers, tc.dns)
			}
		})
	}
}

func strs(a []ipamv1.IPAddressStr) []string {
	out := make([]string, len(a))
	for i, s := range a {
		out[i] = string(s)
	}
	return out
}

// TestAllocateFillsThePool allocates a whole pool one claim after the
// other: every address once, then exhaustion.
func TestAllocateFillsThePool(t *testing.T) {
	for _, strategy := range []ipamv1.AllocationStrategy{ipamv1.AllocationStrategySequential, ipamv1.AllocationStrategyRandom} {
		for _, p := range []ipamv1.Pool{
			{Start: addr("192.168.0.1"), End: addr("192.168.0.20")},
			{Start: addr("2001:db8::fff6"), End: addr("2001:db8::1:9")},
		} {
			t.Run(string(strategy)+" "+string(*p.Start), func(t *testing.T) {
				pool := Pool{Key: "ns/p", Spec: ipamv1.IPPoolSpec{AllocationStrategy: strategy, Pools: []ipamv1.Pool{p}}, Rand: rand.New(rand.NewPCG(1, 2))}
				used := InUse{}
				for i := range 20 {
					a, err := Allocate(pool, Request{Claim: string(rune('a' + i))}, used)
					if err != nil {
						t.Fatalf("claim %d: %v", i, err)
					}
					if _, dup := used[a.Address]; dup {
						t.Fatalf("claim %d got %s twice", i, a.Address)
					}
					used[a.Address] = string(rune('a' + i))
				}
				_, err := Allocate(pool, Request{Claim: "last"}, used)
				if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "ns/p") {
					t.Fatalf("21st claim: %v, want exhaustion naming ns/p", err)
				}
			})
		}
	}
}

func TestAllocateRandomSpreads(t *testing.T) {
	pool := Pool{Key: "ns/p", Rand: rand.New(rand.NewPCG(3, 4)), Spec: ipamv1.IPPoolSpec{
		AllocationStrategy: ipamv1.AllocationStrategyRandom,
		Pools:              []ipamv1.Pool{{Subnet: subnet("fd00::/64")}},
	}}
	seen := map[netip.Addr]bool{}
	for range 5 {
		a, err := Allocate(pool, Request{Claim: "c"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !netip.MustParsePrefix("fd00::/64").Contains(a.Address) {
			t.Fatalf("%s outside the subnet", a.Address)
		}
		seen[a.Address] = true
	}
	if len(seen) < 4 {
		t.Errorf("random strategy gave %d distinct addresses out of 5 on a /64", len(seen))
	}
}

func TestAddressName(t *testing.T) {
	cases := []struct{ prefix, pool, addr, want string }{
		{"pool1", "p", "192.168.0.11", "pool1-192-168-0-11"},
		{"", "provisioning", "10.0.0.1", "provisioning-10-0-0-1"},
		{"v6", "p", "2001:db8::1", "v6-2001-db8--1"},
		{"v6", "p", "2001:db8::", "v6-2001-db8"},
	}
	for _, tc := range cases {
		if got := AddressName(tc.prefix, tc.pool, netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("AddressName(%q, %q, %s) = %q, want %q", tc.prefix, tc.pool, tc.addr, got, tc.want)
		}
	}
}
