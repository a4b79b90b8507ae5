package ironic

import (
	"context"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// TestStuckNodes: a node in a transitional state is Dirty, saying for how
// long, until its deadline (measured from provision_updated_at); past it,
// the first call is an ErrorMessage naming the node, its state and for
// how long, and the next (the controller's retry) takes it out: abort in
// clean wait and inspect wait, "deleted" in wait call-back (Ironic 21.4
// has no abort there), maintenance and DELETE in the states Ironic has no
// verb out of (Register enrolls the node again). A locked node, one held
// for a power failure and the wait states within Ironic's callback
// timeout and the margin are only reported as waiting.
func TestStuckNodes(t *testing.T) {
	ctx := context.Background()
	register := func(p provisioner.Provisioner) (provisioner.Result, error) {
		res, _, err := p.Register(ctx, provisioner.RegisterData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
		return res, err
	}
	inspect := func(p provisioner.Provisioner) (provisioner.Result, error) {
		res, _, err := p.Inspect(ctx, provisioner.InspectData{})
		return res, err
	}
	prepare := func(p provisioner.Provisioner) (provisioner.Result, error) {
		return p.Prepare(ctx, provisioner.PrepareData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	}
	provision := func(p provisioner.Provisioner) (provisioner.Result, error) {
		return p.Provision(ctx, provisioner.ProvisionData{Image: image})
	}
	adopt := func(p provisioner.Provisioner) (provisioner.Result, error) {
		return p.Adopt(ctx, provisioner.AdoptData{State: metal3v1alpha1.StateProvisioned, Image: *image})
	}
	deprovision := func(p provisioner.Provisioner) (provisioner.Result, error) {
		return p.Deprovision(ctx, provisioner.DeprovisionData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	}
	del := func(p provisioner.Provisioner) (provisioner.Result, error) { return p.Delete(ctx) }
	recreate := []string{"PUT maintenance", "DELETE"}
	wait := outcome{dirty: true}
	cases := []struct {
		name  string
		call  func(provisioner.Provisioner) (provisioner.Result, error)
		state string
		// elapsed since provision_updated_at.
		elapsed time.Duration
		opts    Options
		mutate  func(map[string]any)
		// progress is a substring of the first call's Progress ("" for
		// an ErrorMessage).
		progress      string
		first, second outcome
	}{
		{name: "verifying within the deadline", call: register, state: "verifying", elapsed: 9 * time.Minute,
			progress: `node metal3~node-0 in provision state "verifying" for 9m0s (reported stuck after 10m0s)`, first: wait, second: wait},
		{name: "verifying past the deadline: reported, then deleted to enroll again", call: register, state: "verifying", elapsed: 25 * time.Minute,
			first:  outcome{errMsg: `node metal3~node-0 has been in provision state "verifying" for 25m0s (since 2026-11-27T01:00:00Z), past the 10m0s deadline; Ironic has no verb out of this state`},
			second: outcome{dirty: true, actions: recreate}},
		{name: "verifying, locked by a conductor: working", call: register, state: "verifying", elapsed: 25 * time.Minute,
			mutate: func(n map[string]any) { n["reservation"] = "conductor-1" }, progress: "locked by conductor conductor-1", first: wait, second: wait},
		{name: "verifying, the deadline off", call: register, state: "verifying", elapsed: 25 * time.Hour, opts: Options{StuckTimeout: -1},
			progress: "for 25h0m0s", first: wait, second: wait},
		{name: "verifying, a shorter deadline", call: register, state: "verifying", elapsed: 3 * time.Minute, opts: Options{StuckTimeout: 2 * time.Minute},
			first: outcome{errMsg: "past the 2m0s deadline"}, second: outcome{dirty: true, actions: recreate}},
		{name: "inspecting past the deadline", call: inspect, state: "inspecting", elapsed: 11 * time.Minute,
			first: outcome{errMsg: `provision state "inspecting" for 11m0s`}, second: outcome{dirty: true, actions: recreate}},
		{name: "inspect wait within Ironic's timeout and the margin", call: inspect, state: "inspect wait", elapsed: 35 * time.Minute,
			progress: "(Ironic fails it after its inspect_wait_timeout; the provisioner steps in after 40m0s)", first: wait, second: wait},
		{name: "inspect wait clearly past Ironic's timeout: aborted", call: inspect, state: "inspect wait", elapsed: 41 * time.Minute,
			first:  outcome{errMsg: `provision state "inspect wait" for 41m0s (since 2026-11-27T01:00:00Z), past Ironic's inspect_wait_timeout and 10m0s more`},
			second: outcome{dirty: true, actions: []string{"PUT provision abort"}}},
		{name: "clean wait past: aborted", call: prepare, state: "clean wait", elapsed: 41 * time.Minute,
			first: outcome{errMsg: `"clean wait" for 41m0s`}, second: outcome{dirty: true, actions: []string{"PUT provision abort"}}},
		{name: "clean wait past, the last error quoted", call: deprovision, state: "clean wait", elapsed: 41 * time.Minute,
			mutate: func(n map[string]any) { n["last_error"] = "agent token lost" },
			first:  outcome{errMsg: "(last error: agent token lost); the next attempt aborts it"}, second: outcome{dirty: true, actions: []string{"PUT provision abort"}}},
		{name: "clean wait past, Ironic's own callback timeout set shorter", call: prepare, state: "clean wait", elapsed: 16 * time.Minute, opts: Options{CallbackTimeout: 5 * time.Minute},
			first: outcome{errMsg: `"clean wait" for 16m0s`}, second: outcome{dirty: true, actions: []string{"PUT provision abort"}}},
		{name: "clean wait, left to Ironic alone", call: prepare, state: "clean wait", elapsed: 5 * time.Hour, opts: Options{CallbackTimeout: -1},
			progress: "(Ironic fails it after its clean_callback_timeout)", first: wait, second: wait},
		{name: "clean wait past, held for a power failure: waits for the BMC", call: prepare, state: "clean wait", elapsed: 41 * time.Minute,
			mutate: func(n map[string]any) { n["maintenance"], n["fault"] = true, "power failure" }, first: wait, second: wait},
		{name: "wait call-back within", call: provision, state: "wait call-back", elapsed: 29 * time.Minute,
			progress: "deploy_callback_timeout", first: wait, second: wait},
		{name: "wait call-back past: undeployed (no abort there)", call: provision, state: "wait call-back", elapsed: 41 * time.Minute,
			first: outcome{errMsg: "(Ironic has no abort in wait call-back)"}, second: outcome{dirty: true, actions: []string{"PUT provision deleted"}}},
		{name: "provision, deleting after that: waits", call: provision, state: "deleting", elapsed: time.Minute, first: wait, second: wait},
		{name: "deploying past", call: provision, state: "deploying", elapsed: 11 * time.Minute,
			first: outcome{errMsg: `"deploying" for 11m0s`}, second: outcome{dirty: true, actions: recreate}},
		{name: "adopting past", call: adopt, state: "adopting", elapsed: 11 * time.Minute,
			first: outcome{errMsg: `"adopting" for 11m0s`}, second: outcome{dirty: true, actions: recreate}},
		{name: "deleting past", call: deprovision, state: "deleting", elapsed: 11 * time.Minute,
			first: outcome{errMsg: `"deleting" for 11m0s`}, second: outcome{dirty: true, actions: recreate}},
		{name: "cleaning past", call: prepare, state: "cleaning", elapsed: 11 * time.Minute,
			first: outcome{errMsg: `"cleaning" for 11m0s`}, second: outcome{dirty: true, actions: recreate}},
		{name: "delete, verifying within", call: del, state: "verifying", elapsed: 5 * time.Minute, progress: "for 5m0s", first: wait, second: wait},
		{name: "delete, verifying past: deleted at once", call: del, state: "verifying", elapsed: 11 * time.Minute,
			first: outcome{actions: recreate}, second: outcome{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := node(c.state, "")
			if c.mutate != nil {
				c.mutate(n)
			}
			f, url := newFake(t, n)
			p := openFakeAt(t, url, c.opts, func() time.Time { return provisionUpdatedAt.Add(c.elapsed) })
			res, err := c.call(p)
			check(t, "first call", f, res, err, c.first)
			if !strings.Contains(res.Progress, c.progress) || (c.first.dirty && res.Progress == "") {
				t.Errorf("first call: Progress %q, want one with %q", res.Progress, c.progress)
			}
			res, err = c.call(p)
			check(t, "second call", f, res, err, c.second)
		})
	}
}

// TestStuckMeasuredFromIronic: the deadline runs from Ironic's
// provision_updated_at, not from when this process first saw the node: a
// restarted operator (a new factory, nothing remembered) reports a node
// that has been verifying for 25 minutes on its first look, and a process
// that has watched a node for 25 minutes does not report it when Ironic
// moved it (a new provision_updated_at) meanwhile.
func TestStuckMeasuredFromIronic(t *testing.T) {
	ctx := context.Background()
	register := func(p provisioner.Provisioner) (provisioner.Result, error) {
		res, _, err := p.Register(ctx, provisioner.RegisterData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
		return res, err
	}
	n := node("verifying", "")
	f, url := newFake(t, n)
	clock := provisionUpdatedAt.Add(2 * time.Minute)
	now := func() time.Time { return clock }
	before := openFakeAt(t, url, Options{}, now)
	res, err := register(before)
	check(t, "before the restart, 2 minutes in", f, res, err, outcome{dirty: true})

	clock = provisionUpdatedAt.Add(25 * time.Minute)
	restarted := openFakeAt(t, url, Options{}, now)
	res, err = register(restarted)
	check(t, "restarted, 25 minutes in", f, res, err, outcome{errMsg: `"verifying" for 25m0s`})
	res, err = register(restarted)
	check(t, "restarted, the retry", f, res, err, outcome{dirty: true, actions: []string{"PUT maintenance", "DELETE"}})

	// Another node, watched for 25 minutes, that Ironic moved 5 minutes
	// ago (verified, then verifying again after a new manage).
	n = node("verifying", "")
	f, url = newFake(t, n)
	clock = provisionUpdatedAt
	watcher := openFakeAt(t, url, Options{}, now)
	res, err = register(watcher)
	check(t, "first look", f, res, err, outcome{dirty: true})
	f.mu.Lock()
	n["provision_updated_at"] = provisionUpdatedAt.Add(20 * time.Minute).Format(time.RFC3339)
	f.mu.Unlock()
	clock = provisionUpdatedAt.Add(25 * time.Minute)
	res, err = register(watcher)
	check(t, "25 minutes watched, 5 in the state", f, res, err, outcome{dirty: true})
	if !strings.Contains(res.Progress, "for 5m0s") {
		t.Errorf("Progress %q, want the 5 minutes since Ironic's timestamp", res.Progress)
	}
}

// TestStuckPowerChange: a power change Ironic still shows under way
// (target_power_state) on an unlocked node, measured from updated_at, is
// waited for until StuckTimeout, then reported once, then sent again; a
// locked node (the conductor working) is waited for however long.
func TestStuckPowerChange(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name          string
		elapsed       time.Duration
		reservation   string
		first, second outcome
	}{
		{name: "within the deadline", elapsed: 2 * time.Minute, first: outcome{dirty: true}, second: outcome{dirty: true}},
		{name: "past, unlocked: reported, then sent again", elapsed: 11 * time.Minute,
			first:  outcome{errMsg: `node metal3~node-0: the power change to "power on" has been under way for 11m0s (since 2026-11-27T01:00:00Z) with no conductor working on it, past the 10m0s deadline`},
			second: outcome{dirty: true, actions: []string{"PUT power power on"}}},
		{name: "past, locked: waits", elapsed: time.Hour, reservation: "conductor-1", first: outcome{dirty: true}, second: outcome{dirty: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := node("active", "")
			// An active node provisioned long ago: provision_updated_at
			// plays no part in a power change.
			n["provision_updated_at"] = "2026-01-01T00:00:00+00:00"
			n["target_power_state"], n["updated_at"], n["reservation"] = "power on", "2026-11-27T01:00:00+00:00", c.reservation
			f, url := newFake(t, n)
			p := openFakeAt(t, url, Options{}, func() time.Time { return provisionUpdatedAt.Add(c.elapsed) })
			res, err := p.PowerOn(ctx)
			check(t, "first call", f, res, err, c.first)
			if c.first.dirty && !strings.Contains(res.Progress, `power change to "power on" under way for `+c.elapsed.String()) {
				t.Errorf("Progress %q", res.Progress)
			}
			res, err = p.PowerOn(ctx)
			check(t, "second call", f, res, err, c.second)
		})
	}
}
