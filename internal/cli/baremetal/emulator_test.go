package baremetal

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airshipit/airship-go/internal/hostops"
	"github.com/airshipit/airship-go/internal/hostops/hostopstest"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// TestEmulator runs every command, with the default (Redfish) provisioner,
// against the emulator's hosts adopted into the API server.
func TestEmulator(t *testing.T) {
	const ns = "emulated"
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	srv := hostopstest.StartEmulator(t, env.Client, ns, 4, 2, user, password)
	kc := "--kubeconfig=" + env.Kubeconfig
	selected, other := []string{"host-0001", "host-0003"}, "host-0000"
	const iso = "http://images.test/ephemeral.iso"

	out, errOut, code := run(t, nil, kc, "baremetal", "listhosts", "-n", ns, "-o", "json")
	var rows []hostRow
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 4 || rows[1].Name != "host-0001" || rows[1].BMC != srv.Address("host-0001") {
		t.Fatalf("listhosts: exit %d, rows %+v: %s%s", code, rows, out, errOut)
	}

	steps := []struct {
		args  []string
		check func(st emulator.HostState) bool
	}{
		{[]string{"poweron"}, func(st emulator.HostState) bool { return st.PowerOn }},
		{[]string{"reboot"}, func(st emulator.HostState) bool { return st.PowerOn && st.Resets >= 2 }},
		{[]string{"remotedirect", "--iso-url", iso}, func(st emulator.HostState) bool {
			return st.PowerOn && st.Media.Inserted && st.Media.Image == iso && st.BootOverride.Target == "Cd"
		}},
		{[]string{"ejectmedia"}, func(st emulator.HostState) bool { return !st.Media.Inserted }},
		{[]string{"poweroff", "--graceful"}, func(st emulator.HostState) bool { return !st.PowerOn }},
	}
	for _, step := range steps {
		t.Run(step.args[0], func(t *testing.T) {
			args := append([]string{kc, "baremetal"}, step.args...)
			out, errOut, code := run(t, nil, append(args, "-l", "rack=rack-1", "-n", ns)...)
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, errOut)
			}
			for _, h := range selected {
				st, _ := srv.State(h)
				if !step.check(st) {
					t.Errorf("%s after %v: %+v", h, step.args, st)
				}
				if !strings.Contains(errOut, "["+ns+"/"+h+"] done: ") {
					t.Errorf("no progress line for %s:\n%s", h, errOut)
				}
			}
			if st, _ := srv.State(other); st.PowerOn || st.Resets != 0 || st.Media.Inserted {
				t.Errorf("%s (rack-0) was touched: %+v", other, st)
			}
		})
	}

	// powerstatus reads every host's BMC; one refusing the credentials
	// makes it exit 1, its row saying why without the password.
	if _, _, code := run(t, nil, kc, "baremetal", "poweron", "--name", "host-0002", "-n", ns); code != 0 {
		t.Fatalf("poweron host-0002: exit %d", code)
	}
	srv.SetFault("host-0003", emulator.Fault{WrongCredentials: true})
	out, errOut, code = run(t, nil, kc, "baremetal", "powerstatus", "-n", ns, "-o", "json")
	var results []hostops.Result
	if code != 1 || json.Unmarshal([]byte(out), &results) != nil || len(results) != 4 {
		t.Fatalf("powerstatus: exit %d: %s%s", code, out, errOut)
	}
	want := map[string]provisioner.PowerState{"host-0000": provisioner.PowerOff, "host-0001": provisioner.PowerOff, "host-0002": provisioner.PowerOn, "host-0003": ""}
	for _, r := range results {
		if r.PowerState != want[r.Name] || (r.Name == "host-0003") != (r.Error != "") || (r.Error == "" && (r.Media == nil || r.Media.Inserted)) {
			t.Errorf("powerstatus %s: %+v (media %+v)", r.Name, r, r.Media)
		}
	}
	if !strings.Contains(errOut, ns+"/host-0003: ") || strings.Contains(out+errOut, password) {
		t.Fatalf("stderr:\n%s", errOut)
	}
}
