package emulator

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

func TestFaults(t *testing.T) {
	s, base := start(t, Config{Hosts: Generate(2, 1)}, Options{})
	c := connect(t, base, testUser, testPassword, false)
	const faulty, healthy = "host-0000", "host-0001"
	get := func(c schemas.Client, host string) error {
		_, err := schemas.GetComputerSystem(c, systemsPath+"/"+host)
		return err
	}
	reset := func(host string) error {
		_, err := c.Post(systemsPath+"/"+host+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"})
		return err
	}

	t.Run("unreachable", func(t *testing.T) {
		s.SetFault(faulty, Fault{Unreachable: true})
		err := get(c, faulty)
		if err == nil || statusOf(err) != 0 {
			t.Errorf("unreachable host answered: %v", err)
		}
		if err := get(c, healthy); err != nil {
			t.Errorf("the other host: %v", err)
		}
		s.SetFault(faulty, Fault{})
		if err := get(c, faulty); err != nil {
			t.Errorf("after clearing the fault: %v", err)
		}
	})

	t.Run("slow", func(t *testing.T) {
		s.SetFault(faulty, Fault{Delay: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		err := get(c.WithContext(ctx), faulty)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a request held for an hour: %v, want the client's deadline", err)
		}
		if err := get(c, healthy); err != nil {
			t.Errorf("the other host: %v", err)
		}
		s.SetFault(faulty, Fault{})
		if err := get(c, faulty); err != nil {
			t.Errorf("after clearing the fault: %v", err)
		}
	})

	t.Run("failing resets", func(t *testing.T) {
		s.SetFault(faulty, Fault{FailResets: true})
		if err := reset(faulty); statusOf(err) != http.StatusInternalServerError {
			t.Errorf("reset: %v, want 500", err)
		}
		if st := mustState(t, s, faulty); st.PowerOn || st.Resets != 0 {
			t.Errorf("a failed reset acted: %+v", st)
		}
		if err := get(c, faulty); err != nil {
			t.Errorf("reading still works: %v", err)
		}
		if err := reset(healthy); err != nil {
			t.Errorf("the other host: %v", err)
		}
		s.SetFault(faulty, Fault{})
		if err := reset(faulty); err != nil || !mustState(t, s, faulty).PowerOn {
			t.Errorf("after clearing the fault: %v", err)
		}
	})

	t.Run("slow power", func(t *testing.T) {
		s.SetFault(faulty, Fault{PowerLag: 3 * time.Second})
		defer s.SetFault(faulty, Fault{})
		before := mustState(t, s, faulty)
		if before.PowerOn {
			if _, err := c.Post(systemsPath+"/"+faulty+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceOff"}); err != nil {
				t.Fatal(err)
			}
			waitState(t, s, faulty, "off", func(st HostState) bool { return !st.PowerOn })
			before = mustState(t, s, faulty)
		}
		if err := reset(faulty); err != nil {
			t.Fatal(err)
		}
		// Answered and counted at once; the system still reports off.
		sys, err := schemas.GetComputerSystem(c, systemsPath+"/"+faulty)
		if err != nil {
			t.Fatal(err)
		}
		if st := mustState(t, s, faulty); st.Resets != before.Resets+1 || sys.PowerState != schemas.OffPowerState {
			t.Errorf("just after a lagging reset: resets %d (before %d), PowerState %s, want counted and still Off", st.Resets, before.Resets, sys.PowerState)
		}
		waitState(t, s, faulty, "on after the lag", func(st HostState) bool { return st.PowerOn })
	})

	t.Run("wrong credentials", func(t *testing.T) {
		s.SetFault(faulty, Fault{WrongCredentials: true})
		basic := connect(t, base, testUser, testPassword, true)
		for name, client := range map[string]*gofish.APIClient{"session": c, "basic": basic} {
			if err := get(client, faulty); statusOf(err) != http.StatusUnauthorized {
				t.Errorf("%s: %v, want 401", name, err)
			}
			if err := get(client, healthy); err != nil {
				t.Errorf("%s: the other host: %v", name, err)
			}
		}
		s.SetFault(faulty, Fault{})
		if err := get(basic, faulty); err != nil {
			t.Errorf("after clearing the fault: %v", err)
		}
	})
}

// waitState polls the host's state until ok, for 30 s.
func waitState(t *testing.T, s *Server, host, what string, ok func(HostState) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok(mustState(t, s, host)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never %s: %+v", host, what, mustState(t, s, host))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
