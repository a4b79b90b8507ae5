package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/chromedp/chromedp/kb"

	"github.com/airshipit/airship-go/internal/test/browser"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// The tests in this file drive the dashboard's pages in a headless
// Chromium: what they show once the API answered, live changes, actions
// through the menu and dialog, and a page of 1,000 hosts. Every wait is
// bounded (a minute, two for 1,000 hosts); times are logged, never
// asserted.

// jsq makes s a JavaScript string literal.
func jsq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// hostRowSel selects a host's row of the hosts page.
func hostRowSel(ns, name string) string {
	return fmt.Sprintf(`[data-host="c1/%s/%s"]`, ns, name)
}

// auditRowJS is true when the audit page has a row of that action,
// target and result.
func auditRowJS(action, target, result string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(".page-audit tbody tr")].some((tr) => {
		const c = [...tr.cells].map((td) => td.textContent);
		return c[3] === %s && c[4] === %s && c[5] === %s; })`, jsq(action), jsq(target), jsq(result))
}

// bodyTextJS is true when a page's body says text (its answer arrived
// and was empty).
func bodyTextJS(page, text string) string {
	return fmt.Sprintf(`document.querySelector(".page-%s .body")?.textContent === %s`, page, jsq(text))
}

// deleteHostsAtEnd deletes the namespace's BareMetalHosts when the test
// ends: the API server is the package's, and the hosts page shows every
// namespace's hosts.
func deleteHostsAtEnd(t *testing.T, ns string) {
	t.Cleanup(func() {
		err := dyn(t).Resource(bmhGVR).Namespace(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
		if err != nil {
			t.Errorf("deleting the hosts of %s: %v", ns, err)
		}
	})
}

func hostStatus(state string) map[string]any {
	return map[string]any{"provisioning": map[string]any{"state": state, "ID": ""}, "operationalStatus": "OK", "poweredOn": true, "errorMessage": "", "errorCount": 0}
}

// strayTextJS lists the elements of the page's main part that show a
// value rendered as nothing: a text node that is just "null",
// "undefined", "NaN" or "[object Object]".
const strayTextJS = `(() => { const bad = [], w = document.createTreeWalker(document.getElementById("main"), NodeFilter.SHOW_TEXT);
	for (let n; (n = w.nextNode());) if (/^(null|undefined|NaN|\[object Object\])$/.test(n.data.trim())) bad.push(n.parentElement.outerHTML.slice(0, 160));
	return bad; })()`

func noBrowserErrors(t *testing.T, b *browser.Browser, page string) {
	t.Helper()
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("%s: the browser reported errors:\n%s", page, strings.Join(errs, "\n"))
		b.ResetErrors()
	}
}

// TestBrowserPages opens every page of a site with hosts, charts and a
// plan, waits for what only the API's answer draws, and sees no error in
// the browser; on the plan page, Tab reaches a phase box and Enter opens
// that phase.
func TestBrowserPages(t *testing.T) {
	ns := testenv.Namespace(t, env, "browser-pages")
	createHost(t, ns, "node-1", map[string]string{"rack": "rack-1"}, "")
	createHost(t, ns, "node-2", nil, "m-2")
	deleteHostsAtEnd(t, ns)
	for _, o := range []struct {
		resource, kind, name string
		spec                 map[string]any
	}{
		{"armadamanifests", "ArmadaManifest", "site", map[string]any{"release_prefix": "airship", "chart_groups": []any{"core"}}},
		{"armadachartgroups", "ArmadaChartGroup", "core", map[string]any{"chart_group": []any{"ingress"}}},
		{"armadacharts", "ArmadaChart", "ingress", map[string]any{"chart_name": "ingress", "release": "ingress", "namespace": "kube-system",
			"source": map[string]any{"type": "local", "location": "/charts/ingress"}, "wait": map[string]any{"timeout": 60}}},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": armadaGV.String(), "kind": o.kind, "metadata": map[string]any{"name": o.name, "namespace": ns}, "spec": o.spec}}
		if _, err := dyn(t).Resource(armadaGV.WithResource(o.resource)).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	d := startDashboard(t, Options{Site: loadSite(t, siteFiles(ns))})
	// The phases' states as the server read them: the page must show
	// those. (Not a fixed state: a phase's inventory is its cluster's, and
	// another test may have run a phase a on this API server.)
	var plan Plan
	for deadline := time.Now().Add(time.Minute); len(plan.Phases) != 2 || plan.Phases[0].State == StateUnknown || plan.Phases[1].State == StateUnknown; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the phases' states were not read within a minute: %+v", plan)
		}
		d.get(t, "/api/plans/p", &plan)
	}
	boxes := fmt.Sprintf(`document.querySelectorAll("svg.graph a[data-phase]").length === 2 &&
		document.querySelector('svg.graph a[data-phase="a"]')?.getAttribute("data-state") === %s &&
		document.querySelector('svg.graph a[data-phase="b"]')?.getAttribute("data-state") === %s`, jsq(plan.Phases[0].State), jsq(plan.Phases[1].State))
	b := browser.Start(t, browser.WithTimeout(time.Minute))

	pages := []struct{ path, name, ready string }{
		{"/", "overview", `document.getElementById("h-attention") && document.getElementById("h-activity")`},
		{"/plans/p", "plan", boxes},
		{"/phases/a", "phase", `document.querySelector('.phase-head [data-phase="a"]')?.getAttribute("data-state") === ` + jsq(plan.Phases[0].State) + ` &&
			document.getElementById("panel-rendered").textContent.includes("REDACTED")`},
		{"/hosts", "hosts", fmt.Sprintf(`document.querySelector(%s) && document.querySelector(%s)`, jsq(hostRowSel(ns, "node-1")), jsq(hostRowSel(ns, "node-2")))},
		{"/clusters", "clusters", `document.querySelector('[data-cluster="c1"] h2 .badge')?.textContent === "reachable"`},
		{"/charts", "charts", fmt.Sprintf(`[...document.querySelectorAll(".page-charts article.card")].some((c) =>
			c.querySelector("h2").textContent.startsWith(%s) && [...c.querySelectorAll("tbody th")].some((th) => th.textContent === "ingress"))`, jsq(ns+"/site"))},
		{"/certificates", "certificates", bodyTextJS("certificates", "No certificates.")},
		{"/audit", "audit", bodyTextJS("audit", "No actions yet.")},
	}
	for _, p := range pages {
		start := time.Now()
		b.Navigate(d.ts.URL + p.path)
		b.WaitJS(p.ready, nil)
		t.Logf("%s: shown from the API %s after navigating", p.path, time.Since(start).Round(time.Millisecond))
		b.Screenshot(p.name)
		var stray []string
		b.Eval(strayTextJS, &stray)
		if len(stray) > 0 {
			t.Errorf("%s shows a missing value as text in: %s", p.path, strings.Join(stray, "; "))
		}
		noBrowserErrors(t, b, p.path)
	}

	// Keyboard: from the top of the plan page, Tab reaches a phase box of
	// the graph, and Enter opens its phase.
	b.Navigate(d.ts.URL + "/plans/p")
	b.WaitJS(boxes, nil)
	phase, presses := "", 0
	for presses < 40 && phase == "" {
		b.Press(kb.Tab)
		presses++
		b.Eval(`document.activeElement?.closest("svg.graph") ? document.activeElement.getAttribute("data-phase") || "" : ""`, &phase)
	}
	if phase == "" {
		t.Fatalf("%d presses of Tab did not reach a phase box of the plan graph", presses)
	}
	t.Logf("Tab pressed %d times reached phase box %s", presses, phase)
	b.Eval("window.__marker = 1", nil)
	b.Press(kb.Enter)
	b.WaitJS(`location.pathname === `+jsq("/phases/"+phase)+` && document.querySelector(".phase-head [data-phase]")?.getAttribute("data-phase") === `+jsq(phase), nil)
	var marker int
	b.Eval("window.__marker || 0", &marker)
	if marker != 1 {
		t.Error("Enter on a phase box reloaded the page instead of routing in it")
	}
	noBrowserErrors(t, b, "/phases/"+phase+" by keyboard")
}

// TestBrowserLiveHostChange: a host's state changed in the API server
// reaches its row of an open hosts page through the event stream,
// without a reload.
func TestBrowserLiveHostChange(t *testing.T) {
	ns := testenv.Namespace(t, env, "browser-live")
	createHost(t, ns, "node-1", nil, "")
	deleteHostsAtEnd(t, ns)
	d := startDashboard(t, Options{Site: loadSite(t, siteFiles(ns))})
	b := browser.Start(t, browser.WithTimeout(time.Minute))
	row := hostRowSel(ns, "node-1")
	b.Navigate(d.ts.URL + "/hosts")
	b.WaitFor(row)
	if s := b.Attr(row, "data-state"); s != "" {
		t.Errorf("a host without status shows state %q", s)
	}
	b.Eval("window.__marker = 1", nil)
	for _, state := range []string{"provisioned", "deprovisioning"} {
		setHostStatus(t, ns, "node-1", hostStatus(state))
		updated := time.Now()
		b.WaitJS(fmt.Sprintf(`document.querySelector(%s)?.getAttribute("data-state") === %s && document.querySelector(%[1]s + " .badge").textContent === %[2]s`,
			jsq(row), jsq(state)), nil)
		t.Logf("host state %s: row changed %s after the API update", state, time.Since(updated).Round(time.Millisecond))
	}
	var marker int
	b.Eval("window.__marker || 0", &marker)
	if marker != 1 {
		t.Error("the page was reloaded to show the change")
	}
	b.Screenshot("hosts-deprovisioning")
	noBrowserErrors(t, b, "/hosts")
}

// TestBrowserActions: without --allow-actions the hosts page offers no
// action and a power-off posted by the page is refused and audited; with
// it, Power off chosen in a row's menu and confirmed in the dialog by
// keyboard powers the host off and is audited as succeeded.
func TestBrowserActions(t *testing.T) {
	ns := testenv.Namespace(t, env, "browser-actions")
	createHost(t, ns, "node-1", nil, "")
	deleteHostsAtEnd(t, ns)
	site := loadSite(t, siteFiles(ns))
	target, row := "c1/"+ns+"/node-1", hostRowSel(ns, "node-1")
	online := func() bool {
		u, err := dyn(t).Resource(bmhGVR).Namespace(ns).Get(context.Background(), "node-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o, _, _ := unstructured.NestedBool(u.Object, "spec", "online")
		return o
	}

	off := startDashboard(t, Options{Site: site})
	on := startDashboard(t, Options{Site: site, AllowActions: true})
	b := browser.Start(t, browser.WithTimeout(time.Minute))
	b.Navigate(off.ts.URL + "/hosts")
	b.WaitFor(row)
	if n := b.Count("button.row-menu, col.c-actions"); n != 0 {
		t.Errorf("actions off: the hosts page shows %d action buttons or columns", n)
	}
	var status int
	b.Eval(fmt.Sprintf(`fetch(%s, {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"}).then((r) => r.status)`,
		jsq("/api/hosts/"+target+"/power-off")), &status)
	if status != 403 {
		t.Errorf("power-off posted by the page with actions off: %d, want 403", status)
	}
	for _, e := range b.Errors() { // the browser logs the 403 it was answered
		if !strings.Contains(e, "status of 403") || !strings.Contains(e, "/power-off") {
			t.Errorf("browser error: %s", e)
		}
	}
	b.ResetErrors()
	b.Navigate(off.ts.URL + "/audit")
	b.WaitJS(auditRowJS("power-off", target, "refused"), nil)
	b.Screenshot("audit-refused")
	if !online() {
		t.Fatal("the refused power-off changed the host")
	}
	noBrowserErrors(t, b, "/audit, actions off")

	b.Navigate(on.ts.URL + "/hosts")
	b.Click(row + " button.row-menu")
	b.WaitJS(`!document.getElementById("host-menu").hidden && document.activeElement?.textContent === "Power on"`, nil)
	b.Press(kb.ArrowDown)
	b.WaitJS(`document.activeElement?.textContent === "Power off"`, nil)
	b.Press(kb.Enter)
	b.WaitJS(`document.getElementById("confirm").open && document.activeElement?.id === "confirm-cancel" &&
		document.getElementById("confirm-title").textContent === `+jsq("Power off "+ns+"/node-1?"), nil)
	b.Screenshot("confirm-power-off")
	b.Press(kb.Tab)
	b.WaitJS(`document.activeElement?.id === "confirm-ok"`, nil)
	b.Press(kb.Enter)
	b.WaitJS(`!document.getElementById("confirm").open && [...document.querySelectorAll("#runs .notice")].some((n) =>
		n.textContent.startsWith(`+jsq("Power off "+ns+"/node-1: ")+`))`, nil)
	for deadline := time.Now().Add(time.Minute); online(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("spec.online still true a minute after the confirmed power-off")
		}
	}
	// The row follows: its Online column says no.
	b.WaitJS(fmt.Sprintf(`(() => { const col = [...document.querySelectorAll("table.hosts thead th")].findIndex((th) => th.textContent === "Online");
		return col >= 0 && document.querySelector(%s)?.cells[col].textContent === "no"; })()`, jsq(row)), nil)
	b.Navigate(on.ts.URL + "/audit")
	b.WaitJS(auditRowJS("power-off", target, "succeeded"), nil)
	b.Screenshot("audit-succeeded")
	noBrowserErrors(t, b, "power-off through the page")
}

// TestBrowserThousandHosts: a page of 1,000 hosts draws every row (the
// table draws only the rows in view above 1,000) and a filter typed in
// narrows it to one; the time to draw them is logged.
func TestBrowserThousandHosts(t *testing.T) {
	const n = 1000
	ns := testenv.Namespace(t, env, "browser-1000")
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 1000
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deleteHostsAtEnd(t, ns)
	start := time.Now()
	names := make(chan string)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for name := range names {
				u := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost",
					"metadata": map[string]any{"name": name, "namespace": ns},
					"spec":     map[string]any{"online": true, "bmc": map[string]any{"address": "redfish+http://10.0.0.1:8000/redfish/v1/Systems/" + name, "credentialsName": "bmc"}},
				}}
				if _, err := dc.Resource(bmhGVR).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		names <- fmt.Sprintf("host-%04d", i)
	}
	close(names)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("created %d BareMetalHosts in %s", n, time.Since(start).Round(time.Millisecond))

	d := startDashboard(t, Options{Site: loadSite(t, siteFiles(ns))})
	mine := func() int {
		var hosts []Host
		d.get(t, "/api/hosts", &hosts)
		c := 0
		for _, h := range hosts {
			if h.Namespace == ns {
				c++
			}
		}
		return c
	}
	for deadline := time.Now().Add(2 * time.Minute); mine() != n; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("/api/hosts has %d hosts of %s after two minutes, want %d", mine(), ns, n)
		}
	}

	b := browser.Start(t, browser.WithTimeout(2*time.Minute))
	// Records when the rows are all in the page, relative to the start of
	// the navigation (the Performance API's time origin).
	b.AddScript(`window.__drawn = 0; new MutationObserver((_, o) => {
		if (document.querySelectorAll("[data-host]").length >= 1000) { window.__drawn = performance.now(); o.disconnect(); }
	}).observe(document, {childList: true, subtree: true});`)
	// The filter keeps other tests' hosts out (the API server is shared),
	// so that 1,000 rows match: the most the table draws in full.
	b.Navigate(d.ts.URL + "/hosts?q=" + url.QueryEscape(ns+"/"))
	var drawn struct {
		Ms, API, APIBytes float64
	}
	b.WaitJS(`window.__drawn && (() => { const api = performance.getEntriesByType("resource").find((e) => new URL(e.name).pathname === "/api/hosts");
		return {Ms: window.__drawn, API: api ? api.responseEnd : -1, APIBytes: api ? api.encodedBodySize : -1}; })()`, &drawn)
	t.Logf("hosts page, %d hosts: rendered in %.0f ms (GET /api/hosts answered at %.0f ms, %.0f kB)", n, drawn.Ms, drawn.API, drawn.APIBytes/1024)
	if c := b.Count("[data-host]"); c != n {
		t.Errorf("%d rows drawn, want %d", c, n)
	}
	var count string
	b.Eval(`document.getElementById("host-count").textContent`, &count)
	if !strings.HasPrefix(count, fmt.Sprintf("%d of ", n)) {
		t.Errorf("host count %q", count)
	}
	b.Screenshot("hosts-1000")

	// "/" focuses the filter and selects it; what is typed replaces it.
	b.Press("/")
	b.WaitJS(`document.activeElement?.id === "host-filter"`, nil)
	b.Press(ns + "/host-0421")
	typed := time.Now()
	b.WaitCount("[data-host]", 1)
	t.Logf("filter typed: one row left %s after the last key", time.Since(typed).Round(time.Millisecond))
	if h := b.Attr("[data-host]", "data-host"); h != "c1/"+ns+"/host-0421" {
		t.Errorf("the filter left row %s", h)
	}
	b.Screenshot("hosts-filtered")
	noBrowserErrors(t, b, "/hosts, 1,000 hosts")
}
