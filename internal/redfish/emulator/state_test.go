package emulator

import (
	"strings"
	"testing"
)

// TestBootDecisions: what a host boots from, with boots finishing at once
// (BootDelay 0) so each outcome is decided when the request returns.
func TestBootDecisions(t *testing.T) {
	type step struct {
		do   string // a reset type, "insert", "eject" or "boot <target> <enabled>"
		want string // BootedFrom afterwards ("" = not booted)
	}
	for _, tc := range []struct {
		name  string
		steps []step
		node  string // HostState.Node at the end
	}{
		{"nothing to boot", []step{{"On", ""}}, ""},
		{"media boots", []step{{"insert", ""}, {"On", "Cd"}}, "host-0000"},
		{"media wins over an Hdd override", []step{{"boot Hdd Continuous", ""}, {"insert", ""}, {"On", "Cd"}}, "host-0000"},
		{"Pxe boots nothing", []step{{"boot Pxe Once", ""}, {"On", ""}}, ""},
		{"an empty CD boots nothing", []step{{"boot Cd Continuous", ""}, {"On", ""}, {"ForceRestart", ""}}, ""},
		{"a provisioned host boots from disk", []step{{"insert", ""}, {"On", "Cd"}, {"eject", "Cd"}, {"ForceRestart", "Hdd"}, {"ForceOff", ""}, {"On", "Hdd"}}, "host-0000"},
		{"ejecting the media an off host booted from deprovisions", []step{{"insert", ""}, {"On", "Cd"}, {"ForceOff", ""}, {"eject", ""}, {"On", ""}}, ""},
		{"ejecting media an off host did not boot from keeps the provisioning", []step{{"insert", ""}, {"On", "Cd"}, {"eject", "Cd"}, {"insert", "Cd"}, {"ForceOff", ""}, {"eject", ""}, {"On", "Hdd"}}, "host-0000"},
		{"restart after eject keeps the provisioning", []step{{"insert", ""}, {"On", "Cd"}, {"eject", "Cd"}, {"GracefulRestart", "Hdd"}, {"ForceOff", ""}}, "host-0000"},
		{"eject then off deprovisions", []step{{"insert", ""}, {"On", "Cd"}, {"eject", "Cd"}, {"ForceOff", ""}, {"On", ""}}, ""},
		{"eject, then off, of a host already off deprovisions", []step{{"insert", ""}, {"On", "Cd"}, {"ForceOff", ""}, {"eject", ""}, {"GracefulShutdown", ""}, {"On", ""}}, ""},
		{"off with media inserted keeps the provisioning", []step{{"insert", ""}, {"On", "Cd"}, {"ForceOff", ""}, {"On", "Cd"}}, "host-0000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{Username: testUser, Password: testPassword, Hosts: Generate(1, 1)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			h := s.byName["host-0000"]
			for i, st := range tc.steps {
				s.mu.Lock()
				switch {
				case st.do == "insert":
					s.insertMedia(h, Media{Inserted: true, Image: "http://i/x.iso"}, nil)
				case st.do == "eject":
					s.ejectMedia(h)
				case strings.HasPrefix(st.do, "boot "):
					f := strings.Fields(st.do[5:])
					s.setBoot(h, bootPatch{Target: &f[0], Enabled: &f[1]})
				default:
					s.reset(h, st.do)
				}
				s.mu.Unlock()
				if got := mustState(t, s, "host-0000"); got.BootedFrom != st.want || got.Booted != (st.want != "") {
					t.Fatalf("step %d (%s): booted %v from %q, want %q", i, st.do, got.Booted, got.BootedFrom, st.want)
				}
			}
			if got := mustState(t, s, "host-0000"); got.Node != tc.node {
				t.Errorf("Node %q, want %q", got.Node, tc.node)
			}
		})
	}
}
