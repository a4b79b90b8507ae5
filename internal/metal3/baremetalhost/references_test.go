package baremetalhost

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/airshipit/airship-go/internal/hostops/hostopstest"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/direct"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// secretReads records every Secret the controller asks the API server for.
type secretReads struct {
	mu   sync.Mutex
	keys []string
}

func (s *secretReads) add(ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, ns+"/"+name)
}

func (s *secretReads) outside(ns string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, k := range s.keys {
		if !strings.HasPrefix(k, ns+"/") {
			out = append(out, k)
		}
	}
	return out
}

// TestHostReferencesToOtherNamespaces: a BareMetalHost in namespace tenant
// whose userData, networkData or metaData names a Secret of kube-system is
// refused by the controller itself (no admission policy on this API
// server): its status names the field, it gets no finalizer, the Secret of
// kube-system is never read and the BMC is never opened, so nothing of it
// reaches the address the host gives. The host is one the BMC would be
// asked to boot right away (registered, provisioning, an image): with the
// reference in its own namespace, or with none, the same host is provisioned
// with the tenant's data, which shows the test would see a leak.
func TestHostReferencesToOtherNamespaces(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{CRDDirs: []string{"config/metal3/crd/bases"}, AddToScheme: []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme}})
	ctx := context.Background()
	const victim = "VICTIM-kube-system-secret-value"
	const own = "tenant-own-data"
	for _, ns := range []string{"tenant", "kube-system"} {
		if ns != "kube-system" {
			if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "victim"},
		Data: map[string][]byte{"value": []byte(victim), "userData": []byte(victim), "networkData": []byte(victim), "metaData": []byte("v: " + victim)}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "victim"},
		Data: map[string][]byte{"value": []byte(own), "userData": []byte(own), "networkData": []byte(own), "metaData": []byte("v: " + own)}}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		set   func(h *metal3v1alpha1.BareMetalHost, ref *corev1.SecretReference)
		ns    string
		field string // the field refused; empty: accepted
	}{
		{name: "userData in kube-system", ns: "kube-system", field: "spec.userData", set: func(h *metal3v1alpha1.BareMetalHost, r *corev1.SecretReference) { h.Spec.UserData = r }},
		{name: "networkData in kube-system", ns: "kube-system", field: "spec.networkData", set: func(h *metal3v1alpha1.BareMetalHost, r *corev1.SecretReference) { h.Spec.NetworkData = r }},
		{name: "metaData in kube-system", ns: "kube-system", field: "spec.metaData", set: func(h *metal3v1alpha1.BareMetalHost, r *corev1.SecretReference) { h.Spec.MetaData = r }},
		{name: "userData in the host's namespace", ns: "tenant", set: func(h *metal3v1alpha1.BareMetalHost, r *corev1.SecretReference) { h.Spec.UserData = r }},
		{name: "networkData, namespace omitted", ns: "", set: func(h *metal3v1alpha1.BareMetalHost, r *corev1.SecretReference) { h.Spec.NetworkData = r }},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reads := &secretReads{}
			base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			c := interceptor.NewClient(base, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*corev1.Secret); ok {
						reads.add(key.Namespace, key.Name)
					}
					return c.Get(ctx, key, obj, opts...)
				},
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					if _, ok := list.(*corev1.SecretList); ok {
						lo := (&client.ListOptions{}).ApplyOptions(opts)
						reads.add(lo.Namespace, "*")
					}
					return c.List(ctx, list, opts...)
				},
			})

			name := "host-" + string(rune('a'+i))
			sec := hostopstest.Secret("tenant", hostopstest.CredentialsName(name), "admin", "pw")
			if err := env.Client.Create(ctx, sec); err != nil {
				t.Fatal(err)
			}
			h := hostopstest.BareMetalHost("tenant", name, unitAddress, nil)
			liveISO := direct.LiveISO
			h.Spec.Image = &metal3v1alpha1.Image{URL: "http://img.test/os.iso", DiskFormat: &liveISO}
			h.Spec.Online = true
			tt.set(h, &corev1.SecretReference{Name: "victim", Namespace: tt.ns})
			if err := env.Client.Create(ctx, h); err != nil {
				t.Fatal(err)
			}
			// Registered and provisioning: the next pass would boot it.
			h.UpdateGoodCredentials(*sec)
			h.Status.Provisioning.State = metal3v1alpha1.StateProvisioning
			h.Status.OperationalStatus = metal3v1alpha1.OperationalStatusOK
			lu := metav1.NewTime(now)
			h.Status.LastUpdated = &lu
			if err := env.Client.Status().Update(ctx, h); err != nil {
				t.Fatal(err)
			}

			f := hostopstest.NewFactory()
			f.Add(unitBMC, &hostopstest.Host{Username: "admin", Password: "pw", Power: provisioner.PowerOff})
			rec := &recordingFactory{Factory: direct.New(f)}
			r := &BareMetalHostReconciler{Client: c, Factory: rec, Clock: clocktesting.NewFakePassiveClock(now), PowerPollInterval: time.Minute, MaxBackoff: time.Minute}
			req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(h)}
			for range 3 {
				if _, err := r.Reconcile(ctx, req); err != nil {
					t.Fatalf("Reconcile: %v", err)
				}
			}

			got := &metal3v1alpha1.BareMetalHost{}
			if err := env.Client.Get(ctx, req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			_, _, _, boots := f.State(unitBMC)
			provisioned := rec.provisioned()
			for _, d := range provisioned {
				if strings.Contains(string(d.UserData)+string(d.NetworkData)+string(d.MetaData), victim) {
					t.Errorf("the provisioner was handed the kube-system Secret's value")
				}
			}
			if out := reads.outside("tenant"); len(out) > 0 {
				t.Errorf("the controller read Secrets outside the host's namespace: %v", out)
			}
			if tt.field == "" {
				if len(boots) != 1 || len(provisioned) == 0 || !strings.Contains(string(provisioned[0].UserData)+string(provisioned[0].NetworkData), own) {
					t.Fatalf("a host with a same-namespace reference was not provisioned with its data: %d boots, status %s: %s", len(boots), got.Status.ErrorType, got.Status.ErrorMessage)
				}
				return
			}
			want := tt.field + `.namespace: must be the BareMetalHost's namespace "tenant", not "kube-system"`
			if got.Status.ErrorType != metal3v1alpha1.RegistrationError || got.Status.OperationalStatus != metal3v1alpha1.OperationalStatusError || !strings.Contains(got.Status.ErrorMessage, want) {
				t.Errorf("status = %s/%s %q, want a registration error containing %q", got.Status.OperationalStatus, got.Status.ErrorType, got.Status.ErrorMessage, want)
			}
			if opens := f.Opens(); len(opens) != 0 {
				t.Errorf("the BMC was opened %d times for a refused host", len(opens))
			}
			if slices.Contains(got.Finalizers, metal3v1alpha1.BareMetalHostFinalizer) {
				t.Errorf("a refused host got the finalizer %v", got.Finalizers)
			}
		})
	}
}

// recordingFactory records the ProvisionData its provisioners are handed.
type recordingFactory struct {
	provisioner.Factory
	mu   sync.Mutex
	data []provisioner.ProvisionData
}

func (f *recordingFactory) Open(ctx context.Context, h provisioner.Host) (provisioner.Provisioner, error) {
	p, err := f.Factory.Open(ctx, h)
	if err != nil {
		return nil, err
	}
	return &recordingProvisioner{Provisioner: p, f: f}, nil
}

func (f *recordingFactory) provisioned() []provisioner.ProvisionData {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]provisioner.ProvisionData(nil), f.data...)
}

type recordingProvisioner struct {
	provisioner.Provisioner
	f *recordingFactory
}

func (p *recordingProvisioner) Provision(ctx context.Context, d provisioner.ProvisionData) (provisioner.Result, error) {
	p.f.mu.Lock()
	p.f.data = append(p.f.data, d)
	p.f.mu.Unlock()
	return p.Provisioner.Provision(ctx, d)
}
