package dashboard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/airshipit/airship-go/internal/phase/runlog"
)

// Host actions, and the annotations Metal3 reads for them.
const (
	// rebootAnnotation reboots a host once.
	rebootAnnotation = "reboot.metal3.io"
	// powerOffAnnotation keeps a host off until it is removed (Metal3's
	// reboot.metal3.io/<key> form): the power-off of a host a Machine
	// consumes, whose spec.online belongs to Cluster API.
	powerOffAnnotation = "reboot.metal3.io/airship-dashboard"
	// inspectAnnotation asks for a new inspection.
	inspectAnnotation = "inspect.metal3.io"
)

var hostActions = []string{"power-on", "power-off", "reboot", "inspect"}

var metaPatchOptions = metav1.PatchOptions{FieldManager: "airship-dashboard"}

var bmhGVR = schema.GroupVersionResource{Group: "metal3.io", Version: "v1alpha1", Resource: "baremetalhosts"}

// hostAction is POST /api/hosts/{cluster}/{namespace}/{name}/{action}:
// power-on, power-off, reboot or inspect, as a patch of the
// BareMetalHost; Metal3 does the rest.
func (s *Server) hostAction(w http.ResponseWriter, r *http.Request, body []byte) {
	cluster, ns, name, action := r.PathValue("cluster"), r.PathValue("namespace"), r.PathValue("name"), r.PathValue("action")
	target := cluster + "/" + ns + "/" + name
	if err := decodeStrict(body, &struct{}{}); err != nil {
		s.refuse(w, r, http.StatusBadRequest, err)
		return
	}
	if !slices.Contains(hostActions, action) {
		s.refuse(w, r, http.StatusNotFound, fmt.Errorf("action %q is not one of %v", action, hostActions))
		return
	}
	var host *Host
	for _, h := range s.live.hostList() {
		if h.Cluster == cluster && h.Namespace == ns && h.Name == name {
			host = &h
			break
		}
	}
	if host == nil {
		s.refuse(w, r, http.StatusNotFound, fmt.Errorf("BareMetalHost %s/%s not found in cluster %q", ns, name, cluster))
		return
	}
	patch := hostPatch(action, host.Consumer != "")
	ctx, cancel := context.WithTimeout(r.Context(), s.live.opts.Timeout)
	defer cancel()
	rc, err := s.live.restConfig(ctx, cluster)
	var dyn *dynamic.DynamicClient
	if err == nil {
		dyn, err = dynamic.NewForConfig(rc)
	}
	if err == nil {
		b, _ := json.Marshal(patch)
		_, err = dyn.Resource(bmhGVR).Namespace(ns).Patch(ctx, name, types.MergePatchType, b, metaPatchOptions)
	}
	if err != nil {
		s.record(r, action, target, "failed", err.Error())
		writeError(w, http.StatusBadGateway, fmt.Errorf("BareMetalHost %s/%s in cluster %q: %w", ns, name, cluster, err))
		return
	}
	s.record(r, action, target, "succeeded", "")
	writeJSON(w, http.StatusAccepted, ActionAccepted{Message: fmt.Sprintf("%s asked of BareMetalHost %s/%s", action, ns, name)})
}

// hostPatch is the merge patch of an action. A consumed host's spec.online
// belongs to Cluster API: it is powered off with Metal3's
// reboot.metal3.io/<key> annotation instead, and on again by removing it.
func hostPatch(action string, consumed bool) map[string]any {
	ann := map[string]any{}
	spec := map[string]any{}
	switch action {
	case "power-on":
		ann[powerOffAnnotation] = nil
		if !consumed {
			spec["online"] = true
		}
	case "power-off":
		if consumed {
			ann[powerOffAnnotation] = ""
		} else {
			spec["online"] = false
		}
	case "reboot":
		ann[rebootAnnotation] = ""
	case "inspect":
		ann[inspectAnnotation] = ""
	}
	p := map[string]any{"metadata": map[string]any{"annotations": ann}}
	if len(spec) > 0 {
		p["spec"] = spec
	}
	return p
}

// decodeStrict decodes a JSON body, refusing unknown fields; an empty
// body is {}.
func decodeStrict(body []byte, into any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	return nil
}

// refuse answers an action that was not taken, and audits it.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, err error) {
	s.record(r, actionName(r), actionTarget(r), "refused", err.Error())
	writeError(w, code, err)
}

// actionName and actionTarget describe an action request for the audit log.
func actionName(r *http.Request) string {
	if a := r.PathValue("action"); a != "" {
		return a
	}
	if r.PathValue("cluster") == "" && len(r.URL.Path) > len("/api/plans/") && r.URL.Path[:len("/api/plans/")] == "/api/plans/" {
		return "run-plan"
	}
	return "run-phase"
}

func actionTarget(r *http.Request) string {
	if c := r.PathValue("cluster"); c != "" {
		return c + "/" + r.PathValue("namespace") + "/" + r.PathValue("name")
	}
	return r.PathValue("name")
}

// auditLog appends every action to a file: who, when, from where, what,
// on what, and how it ended.
type auditLog struct {
	path string
	mu   sync.Mutex
	recs []AuditRecord
}

// maxAudit bounds the records kept in memory.
const maxAudit = 1000

func openAuditLog(path string) (*auditLog, error) {
	a := &auditLog{path: path}
	if path == "" {
		return a, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer func() { _ = f.Close() }() // read only
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var rec AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("audit log %s line %d: %w", path, line, err)
		}
		a.recs = append(a.recs, rec)
	}
	if len(a.recs) > maxAudit {
		a.recs = a.recs[len(a.recs)-maxAudit:]
	}
	return a, sc.Err()
}

func (a *auditLog) add(rec AuditRecord) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, rec)
	if len(a.recs) > maxAudit {
		a.recs = a.recs[1:]
	}
	if a.path == "" {
		return nil
	}
	return runlog.Append(a.path, rec)
}

func (a *auditLog) list() []AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]AuditRecord, 0, len(a.recs))
	for i := len(a.recs) - 1; i >= 0; i-- {
		out = append(out, a.recs[i])
	}
	return out
}

func (a *auditLog) activity() []Activity {
	var out []Activity
	for i, rec := range a.list() {
		if i == 20 {
			break
		}
		out = append(out, Activity{Time: rec.Time, Type: "Action", Object: rec.Target, Reason: rec.Action + " " + rec.Result, Message: rec.Message})
	}
	return out
}

// record audits an action.
func (s *Server) record(r *http.Request, action, target, result, msg string) {
	rec := AuditRecord{Time: s.opts.Now(), Who: s.user(r), Remote: r.RemoteAddr, Action: action, Target: target, Result: result, Message: msg}
	if err := s.audit.add(rec); err != nil {
		// The record is kept in memory; the file's problem shows with it.
		s.audit.mu.Lock()
		s.audit.recs[len(s.audit.recs)-1].Message += " (audit log file not written: " + err.Error() + ")"
		s.audit.mu.Unlock()
	}
	s.hub.notify(TopicAudit, TopicOverview)
}

// recordResult audits how a run that was accepted ended.
func (s *Server) recordResult(r *http.Request, action, target string, run *Run, err error) {
	if err != nil {
		s.record(r, action, target, RunFailed, "run "+run.ID+": "+err.Error())
		return
	}
	s.record(r, action, target, RunSucceeded, "run "+run.ID)
}

func (s *Server) auditList(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.audit.list())
}
