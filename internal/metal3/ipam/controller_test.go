package ipam_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
	"github.com/airshipit/airship-go/internal/metal3/ipam"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

var env *testenv.Env

// TestMain starts one API server for the package; tests keep apart by
// namespace.
func TestMain(m *testing.M) {
	os.Exit(testenv.MainAPI(m, testenv.Options{
		CRDDirs:     []string{"config/metal3/crd/bases"},
		AddToScheme: []func(*runtime.Scheme) error{ipamv1.AddToScheme},
	}, &env))
}

// startManager runs a manager with the IPPool controller until the test ends.
func startManager(t *testing.T) {
	t.Helper()
	mgr := testenv.NewManager(t, env)
	if err := ipam.SetupWithManager(context.Background(), mgr, ipam.Options{Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, context.Background(), "manager", mgr.Start)
}

func str(s string) *ipamv1.IPAddressStr { a := ipamv1.IPAddressStr(s); return &a }

func createPool(t *testing.T, ns, name string, spec ipamv1.IPPoolSpec) {
	t.Helper()
	if err := env.Client.Create(context.Background(), &ipamv1.IPPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}); err != nil {
		t.Fatal(err)
	}
}

func claim(ns, name, pool string) *ipamv1.IPClaim {
	return &ipamv1.IPClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: pool}}}
}

// eventually polls cond every 100 ms for up to a minute.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: timed out (last error: %v)", what, last)
	}
}

// served reads the claims and returns the address of each that has one.
func served(ctx context.Context, ns string) (map[string]string, map[string]string, error) {
	var claims ipamv1.IPClaimList
	if err := env.Client.List(ctx, &claims, client.InNamespace(ns)); err != nil {
		return nil, nil, err
	}
	addrs, errs := map[string]string{}, map[string]string{}
	for _, c := range claims.Items {
		if c.Status.ErrorMessage != nil {
			errs[c.Name] = *c.Status.ErrorMessage
		}
		if c.Status.Address == nil {
			continue
		}
		a := &ipamv1.IPAddress{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Status.Address.Name}, a); err != nil {
			return nil, nil, err
		}
		if a.Spec.Claim.Name != c.Name {
			return nil, nil, fmt.Errorf("IPAddress %s is of claim %s, not %s", a.Name, a.Spec.Claim.Name, c.Name)
		}
		addrs[c.Name] = string(a.Spec.Address)
	}
	return addrs, errs, nil
}

// TestTwentyClaimsAtOnce: 21 claims created at once on a pool of 20
// addresses. 20 get distinct addresses, with IPAddress objects named and
// owned as upstream does; the 21st waits with an error naming the
// exhausted pool, and gets the address of a claim deleted later. Two
// managers serve the pool at once, as two replicas without leader election
// would: the pool's status, written with optimistic concurrency, keeps
// them from giving an address twice.
func TestTwentyClaimsAtOnce(t *testing.T) {
	ns := testenv.Namespace(t, env, "twenty")
	startManager(t)
	startManager(t)
	ctx := context.Background()
	createPool(t, ns, "pool", ipamv1.IPPoolSpec{
		NamePrefix: "test",
		Prefix:     24,
		Gateway:    str("192.168.0.1"),
		DNSServers: []ipamv1.IPAddressStr{"8.8.8.8"},
		Pools:      []ipamv1.Pool{{Start: str("192.168.0.11"), End: str("192.168.0.30")}},
	})
	var wg sync.WaitGroup
	errs := make(chan error, 21)
	for i := range 21 {
		wg.Go(func() {
			if err := env.Client.Create(ctx, claim(ns, fmt.Sprintf("claim-%02d", i), "pool")); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	var addrs, claimErrs map[string]string
	eventually(t, "20 claims served and one exhausted", func(ctx context.Context) (bool, error) {
		var err error
		addrs, claimErrs, err = served(ctx, ns)
		return err == nil && len(addrs) == 20 && len(claimErrs) == 1, err
	})
	seen := map[string]string{}
	for c, a := range addrs {
		if other, dup := seen[a]; dup {
			t.Fatalf("address %s given to %s and %s", a, c, other)
		}
		seen[a] = c
	}
	var waiting string
	for c, msg := range claimErrs {
		waiting = c
		if !strings.Contains(msg, "IPPool "+ns+"/pool is exhausted") {
			t.Errorf("claim %s error %q does not say the pool %s/pool is exhausted", c, msg, ns)
		}
	}

	// Every address has its IPAddress, named and owned as upstream does.
	var list ipamv1.IPAddressList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 20 {
		t.Fatalf("%d IPAddresses, want 20", len(list.Items))
	}
	for _, a := range list.Items {
		if want := "test-" + strings.ReplaceAll(string(a.Spec.Address), ".", "-"); a.Name != want {
			t.Errorf("IPAddress %s, want name %s", a.Name, want)
		}
		if a.Spec.Prefix != 24 || a.Spec.Gateway == nil || *a.Spec.Gateway != "192.168.0.1" || !slices.Equal(a.Spec.DNSServers, []ipamv1.IPAddressStr{"8.8.8.8"}) {
			t.Errorf("IPAddress %s settings %d %v %v", a.Name, a.Spec.Prefix, a.Spec.Gateway, a.Spec.DNSServers)
		}
		kinds := []string{}
		for _, o := range a.OwnerReferences {
			kinds = append(kinds, o.Kind)
		}
		if !slices.Equal(kinds, []string{"IPPool", "IPClaim"}) || !slices.Contains(a.Finalizers, ipamv1.IPAddressFinalizer) {
			t.Errorf("IPAddress %s owners %v finalizers %v", a.Name, kinds, a.Finalizers)
		}
	}
	pool := &ipamv1.IPPool{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pool"}, pool); err != nil {
		t.Fatal(err)
	}
	if len(pool.Status.Allocations) != 20 || pool.Status.LastUpdated == nil {
		t.Errorf("pool status.indexes has %d entries, want 20", len(pool.Status.Allocations))
	}
	for c, a := range addrs {
		if string(pool.Status.Allocations[c]) != a {
			t.Errorf("status.indexes[%s] = %s, want %s", c, pool.Status.Allocations[c], a)
		}
	}

	// Deleting a claim releases its address to the waiting claim.
	var victim string
	for c := range addrs {
		victim = c
		break
	}
	freed := addrs[victim]
	if err := env.Client.Delete(ctx, claim(ns, victim, "pool")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted claim's address given to the waiting claim", func(ctx context.Context) (bool, error) {
		a, _, err := served(ctx, ns)
		return err == nil && a[waiting] == freed, err
	})
	eventually(t, "the deleted claim gone", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: victim}, &ipamv1.IPClaim{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	c := &ipamv1.IPClaim{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: waiting}, c); err != nil {
		t.Fatal(err)
	}
	if c.Status.ErrorMessage != nil {
		t.Errorf("served claim still reports %q", *c.Status.ErrorMessage)
	}
}

// TestPoolFeatures: IPv6 ranges, pre-allocations, an address asked for by
// annotation, the pool's name standing in for namePrefix, and a pool that
// waits for its claims before it goes.
func TestPoolFeatures(t *testing.T) {
	ns := testenv.Namespace(t, env, "features")
	startManager(t)
	ctx := context.Background()
	createPool(t, ns, "v6", ipamv1.IPPoolSpec{
		Prefix:         64,
		PreAllocations: map[string]ipamv1.IPAddressStr{"pre": "2001:db8::5"},
		Pools:          []ipamv1.Pool{{Subnet: func() *ipamv1.IPSubnetStr { s := ipamv1.IPSubnetStr("2001:db8::/125"); return &s }()}},
	})
	for _, c := range []*ipamv1.IPClaim{claim(ns, "first", "v6"), claim(ns, "pre", "v6"), claim(ns, "asked", "v6")} {
		if c.Name == "asked" {
			c.Annotations = map[string]string{ipamv1.IPAddressAnnotation: "2001:db8::7"}
		}
		if err := env.Client.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	var addrs map[string]string
	eventually(t, "three claims served", func(ctx context.Context) (bool, error) {
		var err error
		addrs, _, err = served(ctx, ns)
		return err == nil && len(addrs) == 3, err
	})
	want := map[string]string{"first": "2001:db8::1", "pre": "2001:db8::5", "asked": "2001:db8::7"}
	for c, a := range want {
		if addrs[c] != a {
			t.Errorf("claim %s got %s, want %s", c, addrs[c], a)
		}
	}
	c := &ipamv1.IPClaim{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "first"}, c); err != nil {
		t.Fatal(err)
	}
	if c.Status.Address.Name != "v6-2001-db8--1" {
		t.Errorf("IPAddress name %s, want v6-2001-db8--1 (pool name as prefix)", c.Status.Address.Name)
	}

	// A deleted pool stays while its claims do, and goes after them.
	pool := &ipamv1.IPPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "v6"}}
	if err := env.Client.Delete(ctx, pool); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
		t.Fatalf("pool gone while its claims remain: %v", err)
	}
	for _, n := range []string{"first", "pre", "asked"} {
		if err := env.Client.Delete(ctx, claim(ns, n, "v6")); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "pool, claims and addresses gone", func(ctx context.Context) (bool, error) {
		var claims ipamv1.IPClaimList
		var addrs ipamv1.IPAddressList
		if err := env.Client.List(ctx, &claims, client.InNamespace(ns)); err != nil {
			return false, err
		}
		if err := env.Client.List(ctx, &addrs, client.InNamespace(ns)); err != nil {
			return false, err
		}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), &ipamv1.IPPool{})
		return len(claims.Items) == 0 && len(addrs.Items) == 0 && apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// TestStatusLostIsRecovered: a pool restored without status (as
// clusterctl move creates it) rebuilds status.indexes from its IPAddress
// objects instead of giving their addresses again.
func TestStatusLostIsRecovered(t *testing.T) {
	ns := testenv.Namespace(t, env, "recover")
	startManager(t)
	ctx := context.Background()
	createPool(t, ns, "p", ipamv1.IPPoolSpec{NamePrefix: "p", Pools: []ipamv1.Pool{{Start: str("10.0.0.1"), End: str("10.0.0.9")}}})
	if err := env.Client.Create(ctx, claim(ns, "a", "p")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "claim a served", func(ctx context.Context) (bool, error) {
		a, _, err := served(ctx, ns)
		return err == nil && a["a"] == "10.0.0.1", err
	})
	pool := &ipamv1.IPPool{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p"}, pool); err != nil {
		t.Fatal(err)
	}
	pool.Status = ipamv1.IPPoolStatus{}
	if err := env.Client.Status().Update(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, claim(ns, "b", "p")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "claim b served with the next address", func(ctx context.Context) (bool, error) {
		a, _, err := served(ctx, ns)
		return err == nil && a["b"] != "", err
	})
	a, _, _ := served(ctx, ns)
	if a["b"] != "10.0.0.2" || a["a"] != "10.0.0.1" {
		t.Errorf("after losing the status: a=%s b=%s, want 10.0.0.1 and 10.0.0.2", a["a"], a["b"])
	}
	eventually(t, "status.indexes rebuilt", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p"}, pool)
		return err == nil && pool.Status.Allocations["a"] == "10.0.0.1" && pool.Status.Allocations["b"] == "10.0.0.2", err
	})
}
