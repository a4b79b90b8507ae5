package emulator

import (
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/configdrive"
)

// TestBootDecisions: what a host boots from, and whether it has a Node,
// with boots finishing at once (BootDelay 0) so each outcome is decided
// when the request returns. The media's fetch is taken as done: "insert"
// a live ISO, "insert drive" a live ISO that is a config drive.
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
		{"a live ISO boots, no Node", []step{{"insert", ""}, {"On", "Cd"}}, ""},
		{"media wins over an Hdd override", []step{{"boot Hdd Continuous", ""}, {"insert", ""}, {"On", "Cd"}}, ""},
		{"Pxe boots nothing", []step{{"boot Pxe Once", ""}, {"On", ""}}, ""},
		{"an empty CD boots nothing", []step{{"boot Cd Continuous", ""}, {"On", ""}, {"ForceRestart", ""}}, ""},
		{"a live ISO that is a config drive registers a Node", []step{{"insert drive", ""}, {"On", "Cd"}}, "host-0000"},
		{"restart after eject: an empty disk boots nothing, the Node stays", []step{{"insert drive", ""}, {"On", "Cd"}, {"eject", "Cd"}, {"GracefulRestart", ""}}, "host-0000"},
		{"eject then off keeps the Node", []step{{"insert drive", ""}, {"On", "Cd"}, {"eject", "Cd"}, {"ForceOff", ""}, {"On", ""}}, "host-0000"},
		{"ejecting the media of an off host keeps the Node", []step{{"insert drive", ""}, {"On", "Cd"}, {"ForceOff", ""}, {"eject", ""}, {"GracefulShutdown", ""}}, "host-0000"},
		{"off with media inserted, on again: boots it again", []step{{"insert drive", ""}, {"On", "Cd"}, {"ForceOff", ""}, {"On", "Cd"}}, "host-0000"},
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
					s.insertMedia(h, Media{Inserted: true, Image: "http://i/x.iso"})
					h.st.probe = &mediaProbe{done: true}
				case st.do == "insert drive":
					s.insertMedia(h, Media{Inserted: true, Image: "http://i/x.iso"})
					h.st.probe = &mediaProbe{done: true, drive: readDriveData(configdrive.Data{MetaData: []byte(`{"uuid": "u-1"}`)})}
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
