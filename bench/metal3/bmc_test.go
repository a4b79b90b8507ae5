package metal3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/strictyaml"
)

// bootDelay is how long an emulated host takes to boot once powered on.
// The operator does not wait for the boot (a host is provisioned once its
// BMC took the media and the power-on), so it does not enter the times;
// it keeps the emulator's boot timers running as they would.
const bootDelay = 100 * time.Millisecond

// hostsPerRack spreads the generated hosts over racks (a label only).
const hostsPerRack = 40

// bmcs are the emulated hosts of one side and the objects that adopt them.
type bmcs struct {
	// secrets are each host's BMC, networkData and userData Secrets.
	secrets []*corev1.Secret
	// hosts are the BareMetalHosts, each pointed at its own endpoint.
	hosts []*metal3v1alpha1.BareMetalHost
	stop  func()
}

// startBMCs starts an emulator of n generated hosts and reads the objects
// that adopt them from its manifests (WriteManifests), in namespace ns,
// plus a userData Secret per host for provisioning.
//
// Each host's BMC is served on a listener of its own (127.0.0.1, its own
// port), as each machine of a rack has its own BMC: the operator keeps a
// Redfish client and its connections per BMC endpoint, so hosts sharing
// the emulator's one endpoint would cost it less than a rack does (at
// 1,000 hosts its peak RSS is about half).
func startBMCs(b *testing.B, n int, ns string) *bmcs {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	emu, err := emulator.New(emulator.Config{
		Username: "admin", Password: "bench-Passw0rd", BootDelay: bootDelay,
		Hosts: emulator.Generate(n, max(1, n/hostsPerRack)),
	}, emulator.Options{})
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	base, err := emu.Start(ctx, "127.0.0.1:0")
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	var servers []*http.Server
	bm := &bmcs{stop: func() {
		cancel()
		for _, s := range servers {
			_ = s.Close()
		}
	}}
	var buf bytes.Buffer
	if err := emulator.WriteManifests(&buf, emu, ns); err != nil {
		bm.stop()
		b.Fatal(err)
	}
	if bm.secrets, bm.hosts, err = decodeManifests(buf.Bytes()); err != nil {
		bm.stop()
		b.Fatal(err)
	}
	for _, h := range bm.hosts {
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			bm.stop()
			b.Fatalf("a BMC endpoint for %s: %v", h.Name, err)
		}
		srv := &http.Server{Handler: emu.Handler(), ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				b.Errorf("BMC endpoint of %s: %v", h.Name, err)
			}
		}()
		h.Spec.BMC.Address = strings.Replace(h.Spec.BMC.Address, base, "http://"+ln.Addr().String(), 1)
		bm.secrets = append(bm.secrets, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: userDataSecretName(h.Name)},
			Data:       map[string][]byte{"userData": fmt.Appendf(nil, "#cloud-config\nhostname: %s\n", h.Name)},
		})
	}
	return bm
}

func userDataSecretName(host string) string { return host + "-user-data" }

// decodeManifests splits the emulator's YAML stream into its Secrets and
// BareMetalHosts.
func decodeManifests(data []byte) ([]*corev1.Secret, []*metal3v1alpha1.BareMetalHost, error) {
	var secrets []*corev1.Secret
	var hosts []*metal3v1alpha1.BareMetalHost
	for i, doc := range strings.Split(string(data), "\n---\n") {
		// The kind only; the typed decode below is strict.
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, nil, fmt.Errorf("emulator manifest %d: %w", i, err)
		}
		switch tm.Kind {
		case "Secret":
			s := &corev1.Secret{}
			if err := strictyaml.Unmarshal([]byte(doc), s); err != nil {
				return nil, nil, fmt.Errorf("emulator manifest %d (Secret): %w", i, err)
			}
			secrets = append(secrets, s)
		case "BareMetalHost":
			h := &metal3v1alpha1.BareMetalHost{}
			if err := strictyaml.Unmarshal([]byte(doc), h); err != nil {
				return nil, nil, fmt.Errorf("emulator manifest %d (BareMetalHost): %w", i, err)
			}
			hosts = append(hosts, h)
		default:
			return nil, nil, fmt.Errorf("emulator manifest %d: unexpected kind %q", i, tm.Kind)
		}
	}
	return secrets, hosts, nil
}
