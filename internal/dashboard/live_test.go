package dashboard

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/phase/runlog"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

func dyn(t *testing.T) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func createHost(t *testing.T, ns, name string, labels map[string]string, consumer string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"online": true, "bmc": map[string]any{"address": "redfish+http://admin:s3cret@10.0.0.1:8000/redfish/v1/Systems/1", "credentialsName": "bmc"}},
	}}
	u.SetLabels(labels)
	if consumer != "" {
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "Metal3Machine", "name": consumer, "namespace": ns}, "spec", "consumerRef")
	}
	if _, err := dyn(t).Resource(bmhGVR).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func setHostStatus(t *testing.T, ns, name string, status map[string]any) {
	t.Helper()
	r := dyn(t).Resource(bmhGVR).Namespace(ns)
	u, err := r.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = status
	if _, err := r.UpdateStatus(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func findHost(d *dash, t *testing.T, ns, name string) *Host {
	var hosts []Host
	d.get(t, "/api/hosts", &hosts)
	for _, h := range hosts {
		if h.Namespace == ns && h.Name == name {
			return &h
		}
	}
	return nil
}

// TestHostsLive: a host created, then failing, reaches the browser as a
// change of the hosts topic, and the hosts and overview pages show it,
// its BMC address and error without the credentials in them.
func TestHostsLive(t *testing.T) {
	d := startDashboard(t, Options{})
	st := d.events(t)
	ns := testenv.Namespace(t, env, "hosts")
	createHost(t, ns, "node-1", map[string]string{"rack": "rack-7", "sip.airshipit.org/cluster-name": "tenant", "sip.airshipit.org/cluster-namespace": "sip", "sip.airshipit.org/node-type": "ControlPlane"}, "")
	st.waitChange(t, TopicHosts, func() bool { return findHost(d, t, ns, "node-1") != nil })
	h := findHost(d, t, ns, "node-1")
	if h.Cluster != "c1" || h.Rack != "rack-7" || h.SIPCluster != "sip/tenant" || h.Role != "ControlPlane" || !h.Online {
		t.Errorf("host %+v", h)
	}
	if strings.Contains(h.BMC, "s3cret") || !strings.Contains(h.BMC, "10.0.0.1") {
		t.Errorf("BMC address %q: want the address without its credentials", h.BMC)
	}

	setHostStatus(t, ns, "node-1", map[string]any{
		"provisioning": map[string]any{"state": "provisioning error", "ID": ""}, "operationalStatus": "error", "poweredOn": true,
		"errorType": "provisioning error", "errorMessage": "image https://user:pw@images.example/x.qcow2 failed", "errorCount": 1,
		"hardwareProfile": "", "goodCredentials": map[string]any{}, "triedCredentials": map[string]any{},
	})
	st.waitChange(t, TopicHosts, func() bool { h := findHost(d, t, ns, "node-1"); return h != nil && h.State == "provisioning error" })
	h = findHost(d, t, ns, "node-1")
	if h.Power != "on" || h.OperationalStatus != "error" || strings.Contains(h.ErrorMessage, "pw@") {
		t.Errorf("host %+v", h)
	}
	var ov Overview
	d.get(t, "/api/overview", &ov)
	found := false
	for _, a := range ov.Attention {
		if a.Kind == "BareMetalHost" && a.Name == ns+"/node-1" && a.Severity == SeverityError && a.Link == "/hosts?q=node-1" {
			found = true
		}
	}
	if !found {
		t.Errorf("overview attention %+v: want the host in error", ov.Attention)
	}
}

// TestHostActions: with actions off a power-off is refused, audited and
// changes nothing; with them on each action patches the host as Metal3
// expects, a consumed host through the power-off annotation, and the
// audit log (0600) records who, what and the result.
func TestHostActions(t *testing.T) {
	ns := testenv.Namespace(t, env, "actions")
	createHost(t, ns, "free", nil, "")
	createHost(t, ns, "used", nil, "m-1")
	site := loadSite(t, siteFiles(ns))

	off := startDashboard(t, Options{Site: site})
	st := off.events(t)
	st.waitChange(t, TopicHosts, func() bool { return findHost(off, t, ns, "used") != nil })
	code, body := off.post(t, "/api/hosts/c1/"+ns+"/free/power-off", "{}", nil)
	if code != 403 || !strings.Contains(body, "--allow-actions") {
		t.Errorf("power-off with actions off: %d %s", code, body)
	}
	var audit []AuditRecord
	off.get(t, "/api/audit", &audit)
	if len(audit) != 1 || audit[0].Result != "refused" || audit[0].Action != "power-off" || audit[0].Target != "c1/"+ns+"/free" {
		t.Errorf("audit %+v", audit)
	}

	on := startDashboard(t, Options{Site: site, AllowActions: true})
	st = on.events(t)
	st.waitChange(t, TopicHosts, func() bool { return findHost(on, t, ns, "used") != nil })
	get := func(name string) *unstructured.Unstructured {
		u, err := dyn(t).Resource(bmhGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	if online, _, _ := unstructured.NestedBool(get("free").Object, "spec", "online"); !online {
		t.Fatal("the refused power-off changed the host")
	}
	steps := []struct {
		host, action string
		check        func(u *unstructured.Unstructured) bool
	}{
		{"free", "power-off", func(u *unstructured.Unstructured) bool {
			o, _, _ := unstructured.NestedBool(u.Object, "spec", "online")
			return !o
		}},
		{"free", "power-on", func(u *unstructured.Unstructured) bool {
			o, _, _ := unstructured.NestedBool(u.Object, "spec", "online")
			return o
		}},
		{"used", "power-off", func(u *unstructured.Unstructured) bool {
			_, has := u.GetAnnotations()[powerOffAnnotation]
			o, _, _ := unstructured.NestedBool(u.Object, "spec", "online")
			return has && o
		}},
		{"used", "power-on", func(u *unstructured.Unstructured) bool { _, has := u.GetAnnotations()[powerOffAnnotation]; return !has }},
		{"used", "reboot", func(u *unstructured.Unstructured) bool { _, has := u.GetAnnotations()[rebootAnnotation]; return has }},
		{"used", "inspect", func(u *unstructured.Unstructured) bool { _, has := u.GetAnnotations()[inspectAnnotation]; return has }},
	}
	for _, s := range steps {
		code, body := on.post(t, "/api/hosts/c1/"+ns+"/"+s.host+"/"+s.action, "{}", nil)
		if code != 202 {
			t.Fatalf("%s %s: %d %s", s.action, s.host, code, body)
		}
		if !s.check(get(s.host)) {
			t.Errorf("%s %s: host not patched as expected: %v", s.action, s.host, get(s.host).Object)
		}
	}
	if code, _ := on.post(t, "/api/hosts/c1/"+ns+"/nope/reboot", "{}", nil); code != 404 {
		t.Errorf("reboot of a host that does not exist: %d", code)
	}
	if code, _ := on.post(t, "/api/hosts/c1/"+ns+"/free/explode", "{}", nil); code != 404 {
		t.Errorf("unknown action: %d", code)
	}
	on.get(t, "/api/audit", &audit)
	if len(audit) != len(steps)+2 || audit[len(audit)-1].Action != "power-off" || audit[len(audit)-1].Result != "succeeded" || audit[0].Result != "refused" {
		t.Errorf("audit, newest first: %+v", audit)
	}
	fi, err := os.Stat(on.srv.opts.AuditLog)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit log: %v %v", fi, err)
	}
	b, _ := os.ReadFile(on.srv.opts.AuditLog)
	if n := strings.Count(string(b), "\n"); n != len(steps)+2 {
		t.Errorf("audit log has %d lines, want %d", n, len(steps)+2)
	}
	// A dashboard started again reads the log back.
	again, err := openAuditLog(on.srv.opts.AuditLog)
	if err != nil || len(again.list()) != len(steps)+2 {
		t.Errorf("audit log read back: %v, %d records", err, len(again.list()))
	}
}

var armadaGV = schema.GroupVersion{Group: "armada.airshipit.org", Version: "v1alpha1"}

// TestChartsLive: a manifest's groups and charts, one chart missing, one
// failing with its error shown, and a chart's change pushed.
func TestChartsLive(t *testing.T) {
	ns := testenv.Namespace(t, env, "charts")
	d := startDashboard(t, Options{})
	st := d.events(t)
	create := func(resource, kind, name string, spec map[string]any) {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": armadaGV.String(), "kind": kind, "metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}}
		if _, err := dyn(t).Resource(armadaGV.WithResource(resource)).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("armadamanifests", "ArmadaManifest", "site", map[string]any{"release_prefix": "airship", "chart_groups": []any{"core", "absent"}})
	create("armadachartgroups", "ArmadaChartGroup", "core", map[string]any{"chart_group": []any{"ingress", "gone"}})
	create("armadacharts", "ArmadaChart", "ingress", map[string]any{"chart_name": "ingress", "release": "ingress", "namespace": "kube-system",
		"source": map[string]any{"type": "local", "location": "/charts/ingress"}, "wait": map[string]any{"timeout": 60}})
	charts := func() []ChartManifest {
		var out []ChartManifest
		d.get(t, "/api/charts", &out)
		var mine []ChartManifest
		for _, m := range out {
			if m.Namespace == ns {
				mine = append(mine, m)
			}
		}
		return mine
	}
	st.waitChange(t, TopicCharts, func() bool {
		m := charts()
		return len(m) == 1 && len(m[0].Groups) == 2 && len(m[0].Groups[0].Charts) == 2 && !m[0].Groups[0].Charts[0].Missing
	})
	m := charts()[0]
	if !m.Groups[1].Missing || m.Groups[1].Name != "absent" || !m.Groups[0].Charts[1].Missing || m.Groups[0].Charts[0].Release != "ingress" {
		t.Errorf("manifest %+v", m)
	}
	r := dyn(t).Resource(armadaGV.WithResource("armadacharts")).Namespace(ns)
	u, err := r.Get(context.Background(), "ingress", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = map[string]any{"state": "failed", "targetState": "deployed", "satisfied": false, "helmRevision": int64(3), "helmStatus": "failed",
		"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "InstallFailed", "message": "pulling https://u:p@charts.example/x failed", "lastTransitionTime": "2026-11-27T00:00:00Z"}}}
	if _, err := r.UpdateStatus(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	st.waitChange(t, TopicCharts, func() bool { return charts()[0].Groups[0].Charts[0].Revision == 3 })
	c := charts()[0].Groups[0].Charts[0]
	if c.State != "failed" || c.HelmStatus != "failed" || !strings.Contains(c.LastError, "charts.example") || strings.Contains(c.LastError, "u:p@") {
		t.Errorf("chart %+v", c)
	}
}

// TestPlanRunAndPhase runs the plan through the dashboard: its progress
// streams, both phases end ready in the graph with their last run, the run
// log keeps them, the phase page shows the rendered Secret redacted, and a
// ConfigMap changed by hand shows its phase drifted.
func TestPlanRunAndPhase(t *testing.T) {
	ns := testenv.Namespace(t, env, "plan")
	d := startDashboard(t, Options{Site: loadSite(t, siteFiles(ns)), AllowActions: true})
	st := d.events(t)
	var p Plan
	if code := d.get(t, "/api/plans/p", &p); code != 200 {
		t.Fatalf("GET plan: %d", code)
	}
	if len(p.Phases) != 2 || len(p.Waves) != 2 || p.Waves[1][0] != 1 || p.Phases[1].DependsOn[0] != "a" {
		t.Fatalf("plan %+v", p)
	}
	code, body := d.post(t, "/api/plans/p/run", `{"resumeFrom": "nope"}`, nil)
	if code != 400 || !strings.Contains(body, "nope") {
		t.Errorf("resumeFrom a phase not in the plan: %d %s", code, body)
	}
	code, body = d.post(t, "/api/plans/p/run", `{"bogus": 1}`, nil)
	if code != 400 || !strings.Contains(body, "bogus") {
		t.Errorf("unknown field: %d %s", code, body)
	}
	code, body = d.post(t, "/api/plans/p/run", `{}`, nil)
	if code != 202 {
		t.Fatalf("run plan: %d %s", code, body)
	}
	var acc ActionAccepted
	_ = json.Unmarshal([]byte(body), &acc)
	st.waitChange(t, TopicRuns, func() bool {
		var run Run
		d.get(t, "/api/runs/"+acc.RunID, &run)
		return run.Result == RunSucceeded
	})
	var run Run
	d.get(t, "/api/runs/"+acc.RunID, &run)
	phasesSeen := map[string]bool{}
	for _, ev := range run.Events {
		phasesSeen[ev.Phase] = true
	}
	if !phasesSeen["a"] || !phasesSeen["b"] {
		t.Errorf("run events %+v: want progress of both phases", run.Events)
	}
	select {
	case ev := <-st.runs:
		if !strings.Contains(ev, acc.RunID) {
			t.Errorf("runevent %s is not of run %s", ev, acc.RunID)
		}
	default:
		t.Error("no runevent was streamed")
	}
	st.waitFor(t, TopicPlans, func() bool {
		d.get(t, "/api/plans/p", &p)
		return p.Phases[0].State == StateReady && p.Phases[1].State == StateReady
	})
	if lr := p.Phases[1].LastRun; lr == nil || lr.Result != RunSucceeded || lr.Seconds <= 0 {
		t.Errorf("phase b last run %+v", lr)
	}
	b, _ := os.ReadFile(filepath.Join(d.dir, "state", "runs.jsonl"))
	if n := strings.Count(string(b), "\n"); n != 3 {
		t.Errorf("run log holds %d runs, want 3 (a, b, the plan): %s", n, b)
	}

	// A run of airshipctl's, appended to the run log while the dashboard
	// runs, is read on the next status round: b failed last.
	cli := runlog.Record{ID: "cli-1", Kind: "phase", Name: "b", Start: time.Now().Add(-2 * time.Second), End: time.Now(), Seconds: 2, Result: RunFailed, Message: "by hand", By: "airshipctl"}
	if err := runlog.Append(filepath.Join(d.dir, "state", "runs.jsonl"), cli); err != nil {
		t.Fatal(err)
	}
	d.srv.phases.refresh()
	st.waitFor(t, TopicPlans, func() bool {
		d.get(t, "/api/plans/p", &p)
		lr := p.Phases[1].LastRun
		return lr != nil && lr.By == "airshipctl" && p.Phases[1].State == StateFailed && lr.Message == "by hand"
	})

	var pd PhaseDetail
	if code := d.get(t, "/api/phases/a", &pd); code != 200 {
		t.Fatalf("GET phase: %d", code)
	}
	if !strings.Contains(pd.Rendered, "REDACTED") || strings.Contains(pd.Rendered, "hunter2") || !strings.Contains(pd.Rendered, "password") {
		t.Errorf("rendered: %s", pd.Rendered)
	}
	if !strings.Contains(pd.ExecutorDocument, "KubernetesApply") || pd.BundlePath == "" || len(pd.ObjectList) != 2 || pd.Objects != 2 || len(pd.Sources) < 3 {
		t.Errorf("phase detail %+v", pd)
	}
	secretSrc := false
	for _, f := range pd.Sources {
		if strings.HasSuffix(f.Path, "secret.yaml") {
			secretSrc = f.Kind == "Resource" && strings.Contains(f.Text, "password: REDACTED") && !strings.Contains(f.Text, "hunter2")
		}
	}
	if !secretSrc {
		t.Errorf("phase detail %+v", pd)
	}

	cm := &corev1.ConfigMap{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "a"}, cm)
	if err == nil {
		cm.Data["k"] = "changed by hand"
		err = env.Client.Update(context.Background(), cm)
	}
	if err != nil {
		t.Fatal(err)
	}
	d.srv.phases.refresh()
	st.waitFor(t, TopicPlans, func() bool {
		d.get(t, "/api/plans/p", &p)
		return p.Phases[0].State == StateDrifted
	})
	d.get(t, "/api/phases/a", &pd)
	var diff []string
	for _, o := range pd.ObjectList {
		if o.Drifted {
			diff = append(diff, o.Diff...)
		}
	}
	if len(diff) != 1 || diff[0] != `data.k: "changed by hand" → "v"` {
		t.Errorf("what differs: %q", diff)
	}
	var ov Overview
	d.get(t, "/api/overview", &ov)
	drifted := false
	for _, a := range ov.Attention {
		drifted = drifted || (a.Kind == "Phase" && a.Name == "a" && a.Severity == SeverityWarning && a.Link == "/phases/a")
	}
	if !drifted {
		t.Errorf("overview attention %+v: want phase a drifted", ov.Attention)
	}
}
