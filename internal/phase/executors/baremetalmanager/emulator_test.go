package baremetalmanager

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airshipit/airship-go/internal/hostops/hostopstest"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/redfish"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// TestEmulator runs every operation over Redfish HTTP against the
// emulator's hosts, adopted into the API server as a site would.
func TestEmulator(t *testing.T) {
	const ns = "emulated"
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	srv := hostopstest.StartEmulator(t, env.Client, ns, 4, 2, user, password)
	f := redfish.New(redfish.Options{})
	selected, other := []string{"host-0001", "host-0003"}, "host-0000"
	const iso = "http://images.test/ephemeral.iso"

	steps := []struct {
		spec  string
		check func(st emulator.HostState) bool
	}{
		{"operation: power-on", func(st emulator.HostState) bool { return st.PowerOn }},
		{"operation: reboot", func(st emulator.HostState) bool { return st.PowerOn && st.Resets >= 2 }},
		{"operation: remote-direct\n  operationOptions: {remoteDirect: {isoURL: " + iso + "}}", func(st emulator.HostState) bool {
			return st.PowerOn && st.Media.Inserted && st.Media.Image == iso && st.BootOverride.Target == "Cd"
		}},
		{"operation: eject-virtual-media", func(st emulator.HostState) bool { return !st.Media.Inserted }},
		{"operation: power-off", func(st emulator.HostState) bool { return !st.PowerOn }},
	}
	for _, step := range steps {
		t.Run(strings.SplitN(step.spec, "\n", 2)[0], func(t *testing.T) {
			e := newExecutor(t, f, "  "+step.spec+"\n  hostSelector: {namespace: "+ns+", labelSelector: rack=rack-1}\n")
			events, err := run(t, e, executor.RunOptions{})
			if err != nil {
				t.Fatalf("Run(): %v\nevents: %+v", err, events)
			}
			for _, h := range selected {
				st, _ := srv.State(h)
				if !step.check(st) {
					t.Errorf("%s after %s: %+v", h, step.spec, st)
				}
			}
			if st, _ := srv.State(other); st.PowerOn || st.Resets != 0 || st.Media.Inserted {
				t.Errorf("%s (rack-0) was touched: %+v", other, st)
			}
			status, err := e.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(status.Objects) != 2 {
				t.Fatalf("status %+v", status)
			}
			for _, o := range status.Objects {
				if !o.Applied || !o.Ready {
					t.Errorf("status %+v, want applied and ready", o)
				}
			}
		})
	}

	t.Run("wrong credentials", func(t *testing.T) {
		srv.SetFault("host-0003", emulator.Fault{WrongCredentials: true})
		defer srv.SetFault("host-0003", emulator.Fault{})
		e := newExecutor(t, f, "  operation: power-on\n  hostSelector: {namespace: "+ns+", labelSelector: rack=rack-1}\n")
		_, err := run(t, e, executor.RunOptions{})
		if err == nil || !strings.Contains(err.Error(), "1 of 2 hosts failed") || !strings.Contains(err.Error(), ns+"/host-0003: ") ||
			strings.Contains(err.Error(), ns+"/host-0001") {
			t.Fatalf("Run() error %v, want one naming host-0003 only", err)
		}
		if strings.Contains(err.Error(), password) {
			t.Fatalf("error holds the password: %v", err)
		}
		if st, _ := srv.State("host-0001"); !st.PowerOn {
			t.Fatalf("host-0001 not powered on beside the failing host: %+v", st)
		}
		status, err := e.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range status.Objects {
			bad := strings.HasSuffix(o.ID, "/host-0003")
			if o.Applied == bad || o.Ready == bad || strings.Contains(o.Message, password) {
				t.Errorf("status %+v", o)
			}
		}
	})
}
