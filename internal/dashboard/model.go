package dashboard

import (
	"time"

	"github.com/airshipit/airship-go/internal/phase/runlog"
)

// The JSON the dashboard's API answers with. Every page of the front end
// reads one of these from GET /api/<page> and reads it again when the
// server's event stream (GET /api/events) names its topic.

// Topics of the event stream: a "change" event's data is
// {"topics":["hosts",...]}, sent at most every 200 ms per topic.
const (
	TopicOverview     = "overview"
	TopicPlans        = "plans"
	TopicPhases       = "phases"
	TopicHosts        = "hosts"
	TopicClusters     = "clusters"
	TopicCharts       = "charts"
	TopicCertificates = "certificates"
	TopicRuns         = "runs"
	TopicAudit        = "audit"
)

// Info is GET /api/info: what the server is and allows.
type Info struct {
	Site         string   `json:"site"`
	Context      string   `json:"context,omitempty"`
	AllowActions bool     `json:"allowActions"`
	Plans        []string `json:"plans"`
	Version      string   `json:"version,omitempty"`
}

// Overview is GET /api/overview.
type Overview struct {
	// Attention lists what needs a look, worst first.
	Attention []Attention `json:"attention"`
	// Activity is the most recent events and runs, newest first (at most 100).
	Activity []Activity `json:"activity"`
	// Counts per page, for the navigation: hosts, charts, ... by state class.
	Counts map[string]int `json:"counts"`
}

// Severities of an Attention item.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Attention is one thing that needs a look.
type Attention struct {
	Severity string `json:"severity"`
	// Kind of thing: Phase, BareMetalHost, ArmadaChart, Machine, Certificate, Cluster.
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Cluster string `json:"cluster,omitempty"`
	Message string `json:"message"`
	// Link is the page path that shows it (/hosts?q=..., /phases/NAME, ...).
	Link string `json:"link"`
}

// Activity is one event or run.
type Activity struct {
	Time    time.Time `json:"time"`
	Cluster string    `json:"cluster,omitempty"`
	// Type is Normal or Warning for events; Run for phase runs; Action for audited actions.
	Type    string `json:"type"`
	Object  string `json:"object"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
}

// Phase states, as the plan graph colours them.
const (
	StateNotRun  = "not run"
	StateRunning = "running"
	StateApplied = "applied"
	StateReady   = "ready"
	StateDrifted = "drifted"
	StateMoved   = "moved"
	StateFailed  = "failed"
	StateUnknown = "unknown"
)

// Plan is one element of GET /api/plans and GET /api/plans/{name}.
type Plan struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Phases      []PlanPhase `json:"phases"`
	// Waves are the phases' indexes grouped by the order they run in: each
	// wave's phases run at once, after every phase of the waves before.
	Waves [][]int `json:"waves"`
}

// PlanPhase is a phase of a plan with its live state.
type PlanPhase struct {
	Name      string   `json:"name"`
	Cluster   string   `json:"cluster,omitempty"`
	Executor  string   `json:"executor,omitempty"`
	DependsOn []string `json:"dependsOn,omitempty"`
	State     string   `json:"state"`
	Message   string   `json:"message,omitempty"`
	// Objects, Applied, Ready and Drifted count the phase's objects.
	Objects int  `json:"objects"`
	Applied int  `json:"applied"`
	Ready   int  `json:"ready"`
	Drifted int  `json:"drifted"`
	LastRun *Run `json:"lastRun,omitempty"`
}

// Run is one run of a phase or plan started here or by airshipctl: its
// record in the site's run log (runlog.Record: ID, kind, name, start, end,
// seconds, result running, succeeded or failed, message, by) and, for a
// run started here, its progress lines (the last 500).
type Run struct {
	runlog.Record
	Events []RunEvent `json:"events,omitempty"`
}

// RunEvent is one progress line of a run.
type RunEvent struct {
	Time    time.Time `json:"time"`
	Phase   string    `json:"phase"`
	Type    string    `json:"type,omitempty"`
	Object  string    `json:"object,omitempty"`
	Message string    `json:"message"`
}

// PhaseDetail is GET /api/phases/{name}.
type PhaseDetail struct {
	PlanPhase
	// ExecutorDocument is the executor document, as YAML.
	ExecutorDocument string `json:"executorDocument"`
	// BundlePath is the executor bundle's kustomize root, relative to the site.
	BundlePath string `json:"bundlePath,omitempty"`
	// Sources are the files of the bundle's kustomize tree, relative to the
	// site, with their text.
	Sources []SourceFile `json:"sources,omitempty"`
	// Rendered is what the executor acts on, as YAML, Secret data redacted.
	Rendered string `json:"rendered"`
	// RenderError says why Rendered is empty.
	RenderError string `json:"renderError,omitempty"`
	// ObjectList is each object rendered against live (PlanPhase's
	// counts say how many).
	ObjectList []PhaseObject `json:"objectList"`
}

// SourceFile is a file of a phase's kustomize tree: what it is to the
// tree (Kustomization, Resource, Patch, ...), its path relative to the
// site, and its text when it is a YAML file inside the site of at most
// 256 KiB, every Secret's values redacted; Note says why not otherwise.
type SourceFile struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
	Text string `json:"text,omitempty"`
	Note string `json:"note,omitempty"`
}

// PhaseObject is one object of a phase: applied, ready, drifted.
type PhaseObject struct {
	ID      string `json:"id"`
	Applied bool   `json:"applied"`
	Ready   bool   `json:"ready"`
	Drifted bool   `json:"drifted"`
	Message string `json:"message,omitempty"`
	// Diff says, for a drifted object, what differs between live and its
	// rendered document: a line a field, "path: live → applied".
	Diff []string `json:"diff,omitempty"`
}

// Host is one BareMetalHost, an element of GET /api/hosts.
type Host struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// State is status.provisioning.state (registering, available, provisioned, ...).
	State string `json:"state"`
	// OperationalStatus is status.operationalStatus (OK, error, detached, ...).
	OperationalStatus string `json:"operationalStatus,omitempty"`
	// Power is "on", "off" or "" (unknown); Online is spec.online.
	Power  string `json:"power"`
	Online bool   `json:"online"`
	// ErrorType and ErrorMessage are status.errorType and status.errorMessage.
	ErrorType    string `json:"errorType,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	// SIPCluster is "namespace/name" of the SIPCluster that holds it; Role is
	// ControlPlane or Worker; Standby marks a reserve host.
	SIPCluster string `json:"sipCluster,omitempty"`
	Role       string `json:"role,omitempty"`
	Standby    bool   `json:"standby,omitempty"`
	// Rack is the value of the host's rack label (the SIPCluster's
	// topologyKey, commonly topology.kubernetes.io/rack or vino.airshipit.org/rack).
	Rack string `json:"rack,omitempty"`
	// Consumer is spec.consumerRef (Kind/namespace/name); Machine the Cluster
	// API Machine that owns the consumer; Node the Node of that Machine.
	Consumer string `json:"consumer,omitempty"`
	Machine  string `json:"machine,omitempty"`
	Node     string `json:"node,omitempty"`
	// BMC is the BMC address with any credentials and query removed.
	BMC string `json:"bmc,omitempty"`
}

// Cluster is one element of GET /api/clusters: the ClusterMap as a tree
// (Parent names the cluster it is built from).
type Cluster struct {
	Name      string   `json:"name"`
	Parent    string   `json:"parent,omitempty"`
	Sources   []string `json:"kubeconfigSources,omitempty"`
	Reachable bool     `json:"reachable"`
	Server    string   `json:"server,omitempty"`
	Version   string   `json:"version,omitempty"`
	Message   string   `json:"message,omitempty"`
	Nodes     []Node   `json:"nodes"`
	// Moved names the namespaces a clusterctl-move phase moved into this
	// cluster (the namespace, and the phase that moved it).
	Moved []MovedNamespace `json:"moved,omitempty"`
}

// Node is a Node of a cluster.
type Node struct {
	Name     string `json:"name"`
	Ready    bool   `json:"ready"`
	Kubelet  string `json:"kubeletVersion,omitempty"`
	Roles    string `json:"roles,omitempty"`
	Provider string `json:"providerID,omitempty"`
}

// MovedNamespace is a namespace a move phase moves to a cluster.
type MovedNamespace struct {
	Namespace string `json:"namespace"`
	Phase     string `json:"phase"`
	From      string `json:"from"`
	// Done is true when the phase's objects are in this cluster.
	Done bool `json:"done"`
}

// ChartManifest is one element of GET /api/charts: an ArmadaManifest
// with its groups and their charts.
type ChartManifest struct {
	Cluster   string       `json:"cluster"`
	Namespace string       `json:"namespace"`
	Name      string       `json:"name"`
	Satisfied bool         `json:"satisfied"`
	Summary   string       `json:"summary,omitempty"`
	Groups    []ChartGroup `json:"groups"`
}

// ChartGroup is an ArmadaChartGroup of a manifest.
type ChartGroup struct {
	Name      string  `json:"name"`
	Satisfied bool    `json:"satisfied"`
	Missing   bool    `json:"missing,omitempty"`
	Charts    []Chart `json:"charts"`
}

// Chart is an ArmadaChart.
type Chart struct {
	Name       string `json:"name"`
	Release    string `json:"release,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	State      string `json:"state,omitempty"`
	Target     string `json:"targetState,omitempty"`
	Satisfied  bool   `json:"satisfied"`
	Missing    bool   `json:"missing,omitempty"`
	Revision   int32  `json:"revision,omitempty"`
	HelmStatus string `json:"helmStatus,omitempty"`
	// LastError is the message of the Ready condition when it is False.
	LastError string `json:"lastError,omitempty"`
}

// Certificate is one element of GET /api/certificates: a certificate or
// CA of the PKICatalog, with its expiry when the site's PKI has it.
type Certificate struct {
	Name      string    `json:"name"`
	Kind      string    `json:"kind"` // CertificateAuthority or Certificate
	CA        string    `json:"ca,omitempty"`
	Subject   string    `json:"subject,omitempty"`
	Hosts     []string  `json:"hosts,omitempty"`
	NotAfter  time.Time `json:"notAfter,omitzero"`
	DaysLeft  int       `json:"daysLeft"`
	Generated bool      `json:"generated"`
	// Expiring is true within 30 days of NotAfter (or past it).
	Expiring bool `json:"expiring"`
}

// AuditRecord is one action taken through the dashboard: who, when, what,
// result. GET /api/audit answers the newest first.
type AuditRecord struct {
	Time   time.Time `json:"time"`
	Who    string    `json:"who"`
	Remote string    `json:"remote,omitempty"`
	Action string    `json:"action"`
	Target string    `json:"target"`
	// Result is accepted, refused, succeeded or failed.
	Result  string `json:"result"`
	Message string `json:"message,omitempty"`
}

// ActionAccepted answers a POST action: 202 with the run's ID (runs only).
type ActionAccepted struct {
	RunID   string `json:"runID,omitempty"`
	Message string `json:"message"`
}

// APIError is every error answer: {"error": "..."}.
type APIError struct {
	Error string `json:"error"`
}
