package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// rackKeys are the host labels read as its rack when no SIPCluster of
// the cluster names a topologyKey.
var rackKeys = []string{"rack", "topology.kubernetes.io/rack", "vino.airshipit.org/rack", "topology.kubernetes.io/zone"}

// hostList joins every cluster's BareMetalHosts with the Machines that
// consume them and those Machines' Nodes.
func (l *live) hostList() []Host {
	n := 0
	l.each(func(cw *clusterWatch) { n += cw.count("hosts") })
	out := make([]Host, 0, n)
	l.each(func(cw *clusterWatch) {
		byInfra := map[string]*machineObj{}
		names := map[*machineObj]string{}
		for _, o := range cw.list("machines") {
			m := o.V.(*machineObj)
			if m.infra != "" {
				byInfra[m.infra] = m
				names[m] = o.Namespace + "/" + o.Name
			}
		}
		keys := slices.Clone(rackKeys)
		for _, o := range cw.list("sipclusters") {
			keys = append(slices.Clone(o.V.(*sipClusterObj).topologyKeys), keys...)
		}
		for _, o := range cw.list("hosts") {
			h := o.V.(*hostObj).Host
			h.Cluster = cw.name
			for _, k := range keys {
				if v := o.V.(*hostObj).label(k); v != "" {
					h.Rack = v
					break
				}
			}
			if m := byInfra[h.Consumer]; m != nil {
				h.Machine, h.Node = names[m], m.node
			}
			out = append(out, h)
		}
	})
	return out
}

func (l *live) clusterList() []Cluster {
	var out []Cluster
	l.each(func(cw *clusterWatch) {
		s := cw.snapshot()
		c := Cluster{Name: cw.name, Parent: cw.parent, Sources: cw.sources, Reachable: s.reachable, Server: s.server, Version: s.version, Message: s.msg, Nodes: []Node{}}
		for _, o := range cw.list("nodes") {
			c.Nodes = append(c.Nodes, o.V.(*nodeObj).Node)
		}
		out = append(out, c)
	})
	return out
}

// chartList is each ArmadaManifest with its groups in order and their
// charts; a group or chart it names that does not exist is marked missing.
func (l *live) chartList() []ChartManifest {
	out := []ChartManifest{}
	l.each(func(cw *clusterWatch) {
		groups := map[string]*obj{}
		for _, o := range cw.list("groups") {
			groups[o.Namespace+"/"+o.Name] = o
		}
		charts := map[string]*obj{}
		for _, o := range cw.list("charts") {
			charts[o.Namespace+"/"+o.Name] = o
		}
		for _, o := range cw.list("manifests") {
			m := o.V.(*manifestObj)
			cm := ChartManifest{Cluster: cw.name, Namespace: o.Namespace, Name: o.Name, Satisfied: m.satisfied, Summary: m.summary, Groups: []ChartGroup{}}
			for _, gname := range m.groups {
				g := ChartGroup{Name: gname, Charts: []Chart{}}
				gobj := groups[o.Namespace+"/"+gname]
				if gobj == nil {
					g.Missing = true
					cm.Groups = append(cm.Groups, g)
					continue
				}
				gv := gobj.V.(*groupObj)
				g.Satisfied = gv.satisfied
				for _, cname := range gv.charts {
					if c := charts[o.Namespace+"/"+cname]; c != nil {
						g.Charts = append(g.Charts, *c.V.(*Chart))
					} else {
						g.Charts = append(g.Charts, Chart{Name: cname, Missing: true})
					}
				}
				cm.Groups = append(cm.Groups, g)
			}
			out = append(out, cm)
		}
	})
	return out
}

// activity is the newest events of every cluster, newest first.
func (l *live) activity(limit int) []Activity {
	var out []Activity
	l.each(func(cw *clusterWatch) {
		for _, o := range cw.list("events") {
			a := o.V.(*eventObj).Activity
			a.Cluster = cw.name
			out = append(out, a)
		}
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// machinesNotRunning lists Machines whose phase is not Running.
func (l *live) machinesNotRunning() []Attention {
	var out []Attention
	l.each(func(cw *clusterWatch) {
		for _, o := range cw.list("machines") {
			m := o.V.(*machineObj)
			if m.phase != "Running" {
				phase := m.phase
				if phase == "" {
					phase = "no phase yet"
				}
				out = append(out, Attention{Severity: SeverityWarning, Kind: "Machine", Name: o.Namespace + "/" + o.Name, Cluster: cw.name,
					Message: "phase " + phase, Link: "/hosts?q=" + url.QueryEscape(o.Name)})
			}
		}
	})
	return out
}

// hosts is GET /api/hosts, encoded once per change of what it shows.
func (s *Server) hosts(w http.ResponseWriter, r *http.Request) {
	doc, err := s.live.hostsJSON()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc)
}

// hostsJSON is hostList encoded, kept until the next change.
func (l *live) hostsJSON() ([]byte, error) {
	l.hostsMu.Lock()
	defer l.hostsMu.Unlock()
	gen := l.hostsGen.Load()
	if l.hostsDoc != nil && l.hostsAt == gen {
		return l.hostsDoc, nil
	}
	h := l.hostList()
	if h == nil {
		h = []Host{}
	}
	doc, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	l.hostsDoc, l.hostsAt = append(doc, '\n'), gen
	return l.hostsDoc, nil
}

func (s *Server) clusters(w http.ResponseWriter, r *http.Request) {
	cs := s.live.clusterList()
	moved := s.phases.moved()
	for i := range cs {
		cs[i].Moved = moved[cs[i].Name]
	}
	if cs == nil {
		cs = []Cluster{}
	}
	writeJSON(w, http.StatusOK, cs)
}

func (s *Server) charts(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.live.chartList())
}

// hostInError says whether a host needs a look, and why.
func hostInError(h Host) (string, bool) {
	switch {
	case h.ErrorType != "" || h.ErrorMessage != "":
		return strings.TrimSpace(h.ErrorType + ": " + h.ErrorMessage), true
	case h.OperationalStatus == "error":
		return "operational status error", true
	case strings.Contains(h.State, "error"):
		return "state " + h.State, true
	}
	return "", false
}

// overview gathers what needs attention, worst first, and recent activity.
func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	ov := Overview{Attention: []Attention{}, Counts: map[string]int{}}
	var errs, warns []Attention
	add := func(a Attention) {
		if a.Severity == SeverityError {
			errs = append(errs, a)
		} else {
			warns = append(warns, a)
		}
	}
	for _, c := range s.live.clusterList() {
		ov.Counts["clusters"]++
		if !c.Reachable {
			add(Attention{Severity: SeverityError, Kind: "Cluster", Name: c.Name, Message: "unreachable: " + c.Message, Link: "/clusters"})
		}
	}
	for _, p := range s.phases.all() {
		ov.Counts["phases"]++
		switch p.State {
		case StateFailed:
			add(Attention{Severity: SeverityError, Kind: "Phase", Name: p.Name, Cluster: p.Cluster, Message: firstNonEmpty(p.Message, "failed"), Link: "/phases/" + url.PathEscape(p.Name)})
		case StateDrifted:
			add(Attention{Severity: SeverityWarning, Kind: "Phase", Name: p.Name, Cluster: p.Cluster, Message: fmt.Sprintf("%d of %d objects drifted", p.Drifted, p.Objects), Link: "/phases/" + url.PathEscape(p.Name)})
		}
	}
	for _, h := range s.live.hostList() {
		ov.Counts["hosts"]++
		if msg, bad := hostInError(h); bad {
			ov.Counts["hostsInError"]++
			add(Attention{Severity: SeverityError, Kind: "BareMetalHost", Name: h.Namespace + "/" + h.Name, Cluster: h.Cluster, Message: msg, Link: "/hosts?q=" + url.QueryEscape(h.Name)})
		}
	}
	for _, m := range s.live.chartList() {
		for _, g := range m.Groups {
			for _, c := range g.Charts {
				ov.Counts["charts"]++
				if !c.Satisfied {
					ov.Counts["chartsNotSatisfied"]++
					msg := firstNonEmpty(c.LastError, fmt.Sprintf("state %q, target %q", c.State, c.Target))
					if c.LastError == "" && c.State == "" {
						msg = "not reconciled yet"
					}
					if c.Missing {
						msg = "missing: the group names it but it does not exist"
					}
					add(Attention{Severity: SeverityWarning, Kind: "ArmadaChart", Name: m.Namespace + "/" + c.Name, Cluster: m.Cluster, Message: msg, Link: "/charts"})
				}
			}
		}
	}
	for _, a := range s.live.machinesNotRunning() {
		add(a)
	}
	for _, c := range s.certList() {
		ov.Counts["certificates"]++
		if c.Expiring {
			ov.Counts["certificatesExpiring"]++
			sev := SeverityWarning
			if c.DaysLeft < 0 {
				sev = SeverityError
			}
			add(Attention{Severity: sev, Kind: "Certificate", Name: c.Name, Message: fmt.Sprintf("expires %s (%d days)", c.NotAfter.Format("2006-01-02"), c.DaysLeft), Link: "/certificates"})
		}
	}
	ov.Attention = append(append(ov.Attention, errs...), warns...)
	ov.Activity = append(s.runs.activity(), s.live.activity(100)...)
	ov.Activity = append(ov.Activity, s.audit.activity()...)
	sort.SliceStable(ov.Activity, func(i, j int) bool { return ov.Activity[i].Time.After(ov.Activity[j].Time) })
	if len(ov.Activity) > 100 {
		ov.Activity = ov.Activity[:100]
	}
	writeJSON(w, http.StatusOK, ov)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
