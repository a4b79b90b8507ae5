//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/dashboard"
	"github.com/airshipit/airship-go/internal/test/browser"
)

// dashboardURL is the address of the dashboard make demo started, as it
// printed it.
func dashboardURL(t *testing.T, demoOut string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^the site's dashboard: (http://127\.0\.0\.1:\d+/)$`).FindStringSubmatch(demoOut)
	if m == nil {
		t.Fatalf("the demo did not print its dashboard's address:\n%s", demoOut)
	}
	if !regexp.MustCompile(`(?m)^The site's dashboard \(read-only; its log in .*\):\n  ` + regexp.QuoteMeta(m[1]) + `$`).MatchString(demoOut) {
		t.Errorf("the demo's closing summary lacks the dashboard's address %s", m[1])
	}
	return m[1]
}

// getJSON reads a dashboard API document.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// postAction sends an action as the dashboard's page does.
func postAction(t *testing.T, base, path string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+strings.TrimPrefix(path, "/"), strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", strings.TrimSuffix(base, "/"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// startDashboard starts `airshipctl dashboard` with the demo's
// environment and extra flags, and returns its address; it is stopped at
// the test's end.
func startDashboard(t *testing.T, root string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	cmd := exec.CommandContext(ctx, filepath.Join(root, "bin", "airshipctl"), append([]string{"dashboard", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-lines:
		m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/)`).FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("dashboard: %s", l)
		}
		return m[1]
	case <-time.After(time.Minute):
		t.Fatal("the dashboard did not start within a minute")
	}
	return ""
}

// expectPlanOnDashboard checks the demo's dashboard shows every phase of
// the plan, each in a state the finished plan can leave it in.
func expectPlanOnDashboard(t *testing.T, url string, phases []string) {
	t.Helper()
	var plan dashboard.Plan
	deadline := time.Now().Add(2 * time.Minute)
	for {
		getJSON(t, url+"api/plans/deploy-local", &plan)
		var names, bad []string
		for _, p := range plan.Phases {
			names = append(names, p.Name)
			if !slices.Contains([]string{dashboard.StateReady, dashboard.StateMoved, dashboard.StateApplied}, p.State) {
				bad = append(bad, p.Name+": "+p.State+" ("+p.Message+")")
			}
			// The demo ran the plan with airshipctl: its runs are in the
			// site's run log.
			if p.LastRun == nil || p.LastRun.Result != "succeeded" || p.LastRun.By != "airshipctl" || p.LastRun.Seconds <= 0 {
				bad = append(bad, fmt.Sprintf("%s: last run %+v", p.Name, p.LastRun))
			}
		}
		for _, p := range phases {
			if !slices.Contains(names, p) {
				t.Fatalf("the dashboard's plan lacks phase %s: %v", p, names)
			}
		}
		if len(bad) == 0 {
			break
		}
		// Every phase's status is read when the dashboard starts and
		// every 30 s: give it two rounds.
		if time.Now().After(deadline) {
			t.Fatalf("phases the dashboard shows in a state the finished plan cannot leave them in: %v", bad)
		}
		time.Sleep(5 * time.Second)
	}
	for _, p := range plan.Phases {
		t.Logf("dashboard: phase %s %s (%d objects, %d ready), last run %.1f s", p.Name, p.State, p.Objects, p.Ready, p.LastRun.Seconds)
	}
}

// expectDashboardLive drives the demo's dashboard in headless Chromium:
// every page shows what the API answers (the plan's every phase with its
// state), without a browser error. An action is refused by the demo's
// read-only dashboard and audited; through a second one started with
// --allow-actions a host is powered off and on again, audited as
// succeeded, and the first one's open hosts page follows both changes
// without a reload.
func expectDashboardLive(t *testing.T, root string, env []string, url string) {
	t.Helper()
	var plan dashboard.Plan
	getJSON(t, url+"api/plans/deploy-local", &plan)
	var hosts []dashboard.Host
	getJSON(t, url+"api/hosts", &hosts)
	var target *dashboard.Host
	for i, h := range hosts {
		if h.Consumer == "" && h.Cluster == "target-cluster" && target == nil {
			target = &hosts[i]
		}
	}
	if target == nil {
		t.Fatalf("no host of the target cluster without a consumer to power off and on: %+v", hosts)
	}
	b := browser.Start(t, browser.WithTimeout(2*time.Minute))
	states := make([]string, 0, len(plan.Phases))
	for _, p := range plan.Phases {
		states = append(states, fmt.Sprintf(`document.querySelector('svg.graph a[data-phase=%s]')?.getAttribute("data-state") === %s`, jsq(p.Name), jsq(p.State)))
	}
	pages := []struct{ path, name, ready string }{
		{"", "overview", `document.getElementById("h-attention") && document.getElementById("h-activity")`},
		{"plans/deploy-local", "plan", fmt.Sprintf(`document.querySelectorAll("svg.graph a[data-phase]").length === %d && %s`, len(plan.Phases), strings.Join(states, " && "))},
		{"phases/workload-target", "phase", `document.querySelector('.phase-head [data-phase="workload-target"]') && document.getElementById("panel-rendered").textContent.length > 0`},
		{"hosts", "hosts", fmt.Sprintf(`document.querySelectorAll("[data-host]").length === %d`, len(hosts))},
		{"clusters", "clusters", `["ephemeral-cluster", "target-cluster"].every((c) => document.querySelector('[data-cluster="' + c + '"] h2 .badge')?.textContent === "reachable")`},
		{"charts", "charts", `document.querySelectorAll(".page-charts article.card").length > 0`},
		{"certificates", "certificates", `document.querySelectorAll(".page-certificates tbody tr").length > 0`},
		{"audit", "audit", `document.querySelector(".page-audit .body") !== null`},
	}
	for _, p := range pages {
		b.Navigate(url + p.path)
		b.WaitJS(p.ready, nil)
		b.Screenshot(p.name)
		if errs := b.Errors(); len(errs) > 0 {
			t.Errorf("/%s: the browser reported errors:\n%s", p.path, strings.Join(errs, "\n"))
			b.ResetErrors()
		}
	}

	// Refused by the read-only dashboard, and audited there.
	path := "api/hosts/" + target.Cluster + "/" + target.Namespace + "/" + target.Name + "/power-off"
	if code, body := postAction(t, url, path); code != http.StatusForbidden || !strings.Contains(body, "--allow-actions") {
		t.Errorf("power-off through the read-only dashboard: %d %s", code, body)
	}
	var audit []dashboard.AuditRecord
	getJSON(t, url+"api/audit", &audit)
	if len(audit) == 0 || audit[0].Action != "power-off" || audit[0].Result != "refused" {
		t.Errorf("the read-only dashboard's audit: %+v", audit)
	}

	// The hosts page open on the read-only dashboard follows what the
	// other one does.
	row := fmt.Sprintf(`[data-host=%s]`, jsq(target.Cluster+"/"+target.Namespace+"/"+target.Name))
	online := func(want string) string {
		return fmt.Sprintf(`(() => { const col = [...document.querySelectorAll("table.hosts thead th")].findIndex((th) => th.textContent === "Online");
			return col >= 0 && document.querySelector(%s)?.cells[col].textContent === %s; })()`, jsq(row), jsq(want))
	}
	b.Navigate(url + "hosts")
	b.WaitJS(online("yes"), nil)
	b.Eval(`window.__marker = 1`, nil)
	actions := startDashboard(t, root, env, "--allow-actions")
	// It acts on the hosts it has seen: wait for its watch to have them.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		var seen []dashboard.Host
		getJSON(t, actions+"api/hosts", &seen)
		if slices.ContainsFunc(seen, func(h dashboard.Host) bool {
			return h.Cluster == target.Cluster && h.Namespace == target.Namespace && h.Name == target.Name
		}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard with --allow-actions did not see %s/%s within 2 minutes", target.Namespace, target.Name)
		}
	}
	for _, step := range []struct{ action, online string }{{"power-off", "no"}, {"power-on", "yes"}} {
		p := "api/hosts/" + target.Cluster + "/" + target.Namespace + "/" + target.Name + "/" + step.action
		if code, body := postAction(t, actions, p); code != http.StatusAccepted {
			t.Fatalf("%s through the dashboard with --allow-actions: %d %s", step.action, code, body)
		}
		b.WaitJS(online(step.online), nil)
		b.Screenshot("hosts-" + step.action)
	}
	var marker int
	b.Eval(`window.__marker || 0`, &marker)
	if marker != 1 {
		t.Error("the hosts page reloaded instead of following the changes")
	}
	getJSON(t, actions+"api/audit", &audit)
	if len(audit) < 2 || audit[0].Action != "power-on" || audit[0].Result != "succeeded" || audit[1].Action != "power-off" || audit[1].Result != "succeeded" {
		t.Errorf("the audit of the dashboard with actions, newest first: %+v", audit)
	}
}

// jsq makes s a JavaScript string literal.
func jsq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
