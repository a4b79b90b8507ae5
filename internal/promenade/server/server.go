// Package server is Promenade's HTTP API: join scripts for nodes that are
// not in the design, removal scripts, node label updates, design
// validation, health and versions.
//
// A remote design (an http(s) design_ref, only with Options.AllowRemote) is
// fetched with a deadline (Options.RemoteTimeout, 30 s) and at most
// Options.MaxDesignBytes (32 MiB) of it is read, through the environment's
// proxy; errors name design_ref and the bound, with the URL redacted.
package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/promenade/builder"
	"github.com/airshipit/airship-go/internal/promenade/certs"
	"github.com/airshipit/airship-go/internal/promenade/docset"
	"github.com/airshipit/airship-go/internal/redact"
)

// Options configure the API.
type Options struct {
	// Token, when set, must be sent as "Authorization: Bearer <token>" (or
	// X-Auth-Token) on every request except health and versions.
	Token string
	// DesignRoot confines file design_refs to this directory (default: the
	// working directory). Symbolic links are followed only within it.
	DesignRoot string
	// AllowRemote lets design_refs be http(s) URLs the server fetches;
	// off by default, since a client could otherwise make the server fetch
	// any URL it can reach.
	AllowRemote bool
	// HTTPClient fetches http(s) design_refs (default: an httplimit client
	// bounded by RemoteTimeout and MaxDesignBytes, through the
	// environment's proxy).
	HTTPClient *http.Client
	// RemoteTimeout bounds one fetch of a remote design (default 30 s).
	RemoteTimeout time.Duration
	// MaxDesignBytes bounds a fetched design (default 32 MiB).
	MaxDesignBytes int64
	// Kube is the client PUT /node-labels changes Nodes with; without it
	// that endpoint answers 503.
	Kube kubernetes.Interface
}

// Defaults of Options.
const (
	DefaultRemoteTimeout  = 30 * time.Second
	DefaultMaxDesignBytes = 32 << 20
)

// Server is the API handler.
type Server struct {
	opts Options
	mux  *http.ServeMux
}

// New returns the API handler. It fails when the design root cannot be
// opened.
func New(opts Options) (*Server, error) {
	if opts.RemoteTimeout == 0 {
		opts.RemoteTimeout = DefaultRemoteTimeout
	}
	if opts.MaxDesignBytes <= 0 {
		opts.MaxDesignBytes = DefaultMaxDesignBytes
	}
	if opts.RemoteTimeout < 0 {
		return nil, fmt.Errorf("remote design timeout %s: must not be negative", opts.RemoteTimeout)
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = httplimit.NewClient(httplimit.ClientOptions{
			Timeout:          opts.RemoteTimeout,
			MaxResponseBytes: opts.MaxDesignBytes,
			Proxy:            httplimit.ProxyFromEnvironment(),
		})
	}
	if opts.DesignRoot == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("design root: %w", err)
		}
		opts.DesignRoot = wd
	}
	// The root's own path is resolved once, so that design_refs given as
	// absolute paths through a symlinked root still fall inside it.
	root, err := filepath.Abs(opts.DesignRoot)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fmt.Errorf("design root %s: %w", opts.DesignRoot, err)
	}
	opts.DesignRoot = root
	s := &Server{opts: opts, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /api/v1.0/health", s.health)
	s.mux.HandleFunc("GET /api/v1.0/versions", s.versions)
	s.mux.HandleFunc("GET /api/v1.0/join-scripts", s.auth(s.joinScripts))
	s.mux.HandleFunc("POST /api/v1.0/validatedesign", s.auth(s.validateDesign))
	s.mux.HandleFunc("PUT /api/v1.0/node-labels/{node}", s.auth(s.nodeLabels))
	s.mux.HandleFunc("GET /api/v1.0/removal-scripts", s.auth(s.removalScripts))
	methods := map[string]string{
		"/api/v1.0/health": "GET", "/api/v1.0/versions": "GET",
		"/api/v1.0/join-scripts": "GET", "/api/v1.0/validatedesign": "POST",
		"/api/v1.0/removal-scripts": "GET",
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		m, ok := methods[r.URL.Path]
		if rest, labels := strings.CutPrefix(r.URL.Path, "/api/v1.0/node-labels/"); labels && rest != "" && !strings.Contains(rest, "/") {
			m, ok = "PUT", true
		}
		if ok {
			w.Header().Set("Allow", m)
			writeError(w, http.StatusMethodNotAllowed, "", fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, m))
			return
		}
		writeError(w, http.StatusNotFound, "", fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
	})
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Status is the JSON body of errors and validation results.
type Status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Status     string         `json:"status"`
	Reason     string         `json:"reason"`
	Message    string         `json:"message"`
	Parameter  string         `json:"parameter,omitempty"`
	Code       int            `json:"code"`
	Details    *StatusDetails `json:"details,omitempty"`
}

// StatusDetails lists validation messages.
type StatusDetails struct {
	ErrorCount  int             `json:"errorCount"`
	MessageList []StatusMessage `json:"messageList"`
}

// StatusMessage is one validation message.
type StatusMessage struct {
	Message string `json:"message"`
	Error   bool   `json:"error"`
	Level   string `json:"level"`
	Name    string `json:"name,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, param, msg string) {
	writeJSON(w, code, Status{
		Kind: "Status", APIVersion: "v1.0", Status: "Failure", Reason: http.StatusText(code),
		Message: msg, Parameter: param, Code: code,
	})
}

// paramError is a bad request naming the parameter.
type paramError struct {
	param, msg string
	err        error
}

func (e *paramError) Error() string { return e.param + ": " + e.msg }

func (e *paramError) Unwrap() error { return e.err }

func wrapParam(param string, err error) error {
	return &paramError{param: param, msg: err.Error(), err: err}
}

func badParam(param, format string, args ...any) error {
	return &paramError{param: param, msg: fmt.Sprintf(format, args...)}
}

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Token != "" {
			got := r.Header.Get("X-Auth-Token")
			if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
				got = strings.TrimPrefix(a, "Bearer ")
			}
			if subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="promenade"`)
				writeError(w, http.StatusUnauthorized, "", "missing or wrong bearer token")
				return
			}
		}
		h(w, r)
	}
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) versions(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"v1.0": map[string]string{"path": "/api/v1.0", "status": "stable"}})
}

var (
	hostnameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	labelRE    = regexp.MustCompile(`^([a-zA-Z0-9]([-a-zA-Z0-9_./]*[a-zA-Z0-9])?)=([a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?)?$`)
)

// listParam accepts repeated parameters and comma-separated values.
func listParam(q url.Values, name string) ([]string, error) {
	var out []string
	for _, v := range q[name] {
		for _, item := range strings.Split(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if !labelRE.MatchString(item) {
				return nil, badParam(name, "%q is not a label of the form key=value", item)
			}
			out = append(out, item)
		}
	}
	return out, nil
}

func required(q url.Values, name string) (string, error) {
	v := strings.TrimSpace(q.Get(name))
	if v == "" {
		return "", badParam(name, "required parameter %s is missing", name)
	}
	return v, nil
}

// JoinRequest holds the parsed join-scripts parameters.
type JoinRequest struct {
	Hostname, IP, Domain, DesignRef, JoinIP string
	Static, Dynamic                         []string
	LeaveKubectl                            bool
}

// ParseJoinRequest checks the query parameters of GET /join-scripts.
func ParseJoinRequest(q url.Values) (*JoinRequest, error) {
	var req JoinRequest
	var err error
	if req.Hostname, err = required(q, "hostname"); err != nil {
		return nil, err
	}
	if !hostnameRE.MatchString(req.Hostname) {
		return nil, badParam("hostname", "%q is not a valid hostname (lower-case letters, digits and '-')", req.Hostname)
	}
	if req.IP, err = required(q, "ip"); err != nil {
		return nil, err
	}
	if ip := net.ParseIP(req.IP); ip == nil || ip.To4() == nil {
		return nil, badParam("ip", "%q is not an IPv4 address", req.IP)
	}
	if req.DesignRef, err = required(q, "design_ref"); err != nil {
		return nil, err
	}
	req.Domain = q.Get("domain")
	if req.JoinIP = q.Get("join_ip"); req.JoinIP != "" && net.ParseIP(req.JoinIP) == nil {
		return nil, badParam("join_ip", "%q is not an IP address", req.JoinIP)
	}
	if req.Dynamic, err = listParam(q, "labels.dynamic"); err != nil {
		return nil, err
	}
	if req.Static, err = listParam(q, "labels.static"); err != nil {
		return nil, err
	}
	if v := q.Get("leave_kubectl"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, badParam("leave_kubectl", "%q is not a boolean", v)
		}
		req.LeaveKubectl = b
	}
	return &req, nil
}

func (s *Server) joinScripts(w http.ResponseWriter, r *http.Request) {
	req, err := ParseJoinRequest(r.URL.Query())
	if err != nil {
		s.fail(w, err)
		return
	}
	set, err := s.loadDesign(r.Context(), req.DesignRef)
	if err != nil {
		s.fail(w, err)
		return
	}
	script, err := JoinScript(set, req)
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/x-shellscript")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=join-%s.sh", req.Hostname))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(script)
}

// JoinScript renders the join script of a node that is added to the design.
func JoinScript(set *docset.Set, req *JoinRequest) ([]byte, error) {
	nodes, err := set.Nodes()
	if err != nil {
		return nil, badParam("design_ref", "the design's nodes are invalid: %v", err)
	}
	for _, n := range nodes {
		if n.Hostname == req.Hostname {
			return nil, badParam("hostname", "node %s is already defined in the design (its join script comes from build-all)", req.Hostname)
		}
	}
	var g v1.Genesis
	if err := set.One(v1.SchemaGenesis, &g); err == nil && g.Hostname == req.Hostname {
		return nil, badParam("hostname", "%s is the genesis node of the design", req.Hostname)
	}
	b, node, err := addNode(set, req, builder.Options{LeaveKubectl: req.LeaveKubectl})
	if err != nil {
		return nil, err
	}
	s, err := b.JoinScript(node)
	if err != nil {
		return nil, badParam("design_ref", "%v", err)
	}
	return s, nil
}

// addNode adds the requested node to the design and returns a builder for
// it.
func addNode(set *docset.Set, req *JoinRequest, opts builder.Options) (*builder.Builder, docset.Node, error) {
	node := docset.Node{Name: req.Hostname, KubernetesNode: v1.KubernetesNode{
		Hostname: req.Hostname, IP: req.IP, Domain: req.Domain, JoinIP: req.JoinIP,
		Labels: v1.Labels{Static: req.Static, Dynamic: req.Dynamic},
	}}
	doc, err := docset.NewDocument(v1.SchemaKubernetesNode, req.Hostname, node.KubernetesNode)
	if err != nil {
		return nil, node, err
	}
	doc.Source = "join-scripts request"
	if err := set.Append(doc); err != nil {
		return nil, node, badParam("design_ref", "the design with this node is invalid: %v", err)
	}
	b, err := builder.New(set, opts)
	if err != nil {
		return nil, node, badParam("design_ref", "%v", err)
	}
	return b, node, nil
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	var pe *paramError
	if errors.As(err, &pe) {
		writeError(w, http.StatusBadRequest, pe.param, pe.Error())
		return
	}
	writeError(w, http.StatusInternalServerError, "", err.Error())
}

// loadDesign reads a design_ref: a file or directory path (or file:// URL)
// or an http(s) URL of a YAML document stream.
func (s *Server) loadDesign(ctx context.Context, ref string) (*docset.Set, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return nil, badParam("design_ref", "malformed design_ref %q: %v", ref, err)
	}
	scheme := strings.TrimPrefix(u.Scheme, "deckhand+")
	switch scheme {
	case "http", "https":
		if u.Host == "" {
			return nil, badParam("design_ref", "malformed design_ref %q: no host", ref)
		}
		if !s.opts.AllowRemote {
			return nil, badParam("design_ref", "http(s) design_refs are disabled on this server (it was started without --allow-remote-designs)")
		}
		u.Scheme = scheme
		return s.fetch(ctx, u.String())
	case "file", "":
		path := u.Path
		if scheme == "" {
			path = ref
		}
		return s.loadPath(path)
	default:
		return nil, badParam("design_ref", "unsupported design_ref scheme %q (want a path, file://, http:// or https://)", u.Scheme)
	}
}

func (s *Server) fetch(ctx context.Context, ref string) (*docset.Set, error) {
	shown := redact.URL(ref)
	ctx, cancel := context.WithTimeout(ctx, s.opts.RemoteTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ref, nil)
	if err != nil {
		return nil, badParam("design_ref", "design_ref %s: %v", shown, redact.Error(err))
	}
	resp, err := s.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, badParam("design_ref", "fetching %s: %v", shown, fetchError(err))
	}
	defer func() { _ = resp.Body.Close() }() // only read: closing cannot lose data
	if resp.StatusCode != http.StatusOK {
		return nil, badParam("design_ref", "fetching %s: %s", shown, resp.Status)
	}
	// The client caps the body too; this is the cap of a client given in
	// Options.
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.opts.MaxDesignBytes+1))
	if err != nil {
		return nil, badParam("design_ref", "fetching %s: %v", shown, fetchError(err))
	}
	if int64(len(body)) > s.opts.MaxDesignBytes {
		return nil, badParam("design_ref", "%s is larger than the limit of %d bytes (--max-design-bytes)", shown, s.opts.MaxDesignBytes)
	}
	set, err := docset.LoadSources(docset.Source{Name: shown, Data: body})
	if err != nil {
		return nil, wrapParam("design_ref", err)
	}
	return set, nil
}

// fetchError says why a fetch failed without quoting its URL again (a
// *url.Error repeats it unredacted).
func fetchError(err error) error {
	var tooLarge *httplimit.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Errorf("the answer is larger than the limit of %d bytes (--max-design-bytes)", tooLarge.Limit)
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		return errors.New("timed out (--remote-design-timeout)")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return redact.Error(ue.Err)
	}
	return redact.Error(err)
}

// loadPath reads a design file, or the *.yaml files of a design directory,
// through an os.Root at the design root: nothing outside it is opened, a
// symbolic link that leads out of it included. Errors name the path the
// client gave, never what lies outside the root.
func (s *Server) loadPath(path string) (*docset.Set, error) {
	if path == "" {
		return nil, badParam("design_ref", "empty design_ref path")
	}
	outside := badParam("design_ref", "%s is outside the design root", path)
	rel := path
	if filepath.IsAbs(path) {
		var err error
		if rel, err = filepath.Rel(s.opts.DesignRoot, filepath.Clean(path)); err != nil {
			return nil, outside
		}
	}
	rel = filepath.Clean(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return nil, outside
	}
	root, err := os.OpenRoot(s.opts.DesignRoot)
	if err != nil {
		return nil, fmt.Errorf("opening the design root: %w", err)
	}
	defer func() { _ = root.Close() }() // only read: closing cannot lose data
	fi, err := root.Stat(rel)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, badParam("design_ref", "%s: no such file or directory", path)
		}
		// os.Root refuses a path that leaves it (a symlink escape among them).
		return nil, outside
	}
	files := []string{rel}
	if fi.IsDir() {
		entries, err := fs.ReadDir(root.FS(), filepath.ToSlash(rel))
		if err != nil {
			return nil, badParam("design_ref", "reading directory %s failed", path)
		}
		files = nil
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") {
				files = append(files, filepath.Join(rel, e.Name()))
			}
		}
		sort.Strings(files)
		if len(files) == 0 {
			return nil, badParam("design_ref", "directory %s has no *.yaml files", path)
		}
	}
	sources := make([]docset.Source, 0, len(files))
	for _, f := range files {
		data, err := root.ReadFile(f)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, badParam("design_ref", "%s: no such file", filepath.Join(filepath.Dir(path), filepath.Base(f)))
			}
			return nil, badParam("design_ref", "%s is outside the design root or unreadable", filepath.Join(path, filepath.Base(f)))
		}
		sources = append(sources, docset.Source{Name: filepath.Join(s.opts.DesignRoot, f), Data: data})
	}
	set, err := docset.LoadSources(sources...)
	if err != nil {
		return nil, wrapParam("design_ref", err)
	}
	return set, nil
}

// ValidateDesignRequest is the body of POST /validatedesign.
type ValidateDesignRequest struct {
	Href string `json:"href"`
}

func (s *Server) validateDesign(w http.ResponseWriter, r *http.Request) {
	var req ValidateDesignRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "body", "request body must be JSON like {\"href\": \"<design_ref>\"}: "+err.Error())
		return
	}
	if req.Href == "" {
		writeError(w, http.StatusBadRequest, "href", "required field href is missing")
		return
	}
	var msgs []StatusMessage
	set, err := s.loadDesign(r.Context(), req.Href)
	if err != nil {
		var pe *paramError
		var verrs docset.ValidationErrors
		if errors.As(err, &verrs) {
			for _, e := range verrs {
				msgs = append(msgs, StatusMessage{Message: e.Error(), Error: true, Level: "Error", Name: e.Document})
			}
		}
		if len(msgs) == 0 {
			if errors.As(err, &pe) {
				pe.param = "href"
			}
			s.fail(w, err)
			return
		}
	} else {
		if _, err := certs.ReadCatalog(set); err != nil {
			msgs = append(msgs, StatusMessage{Message: err.Error(), Error: true, Level: "Error", Name: "PKICatalog"})
		}
		if _, err := builder.New(set, builder.Options{}); err != nil {
			msgs = append(msgs, StatusMessage{Message: err.Error(), Error: true, Level: "Error", Name: "Design"})
		}
	}
	st := Status{Kind: "Status", APIVersion: "v1.0", Reason: "Validation", Status: "Success", Message: "design is valid", Code: http.StatusOK,
		Details: &StatusDetails{ErrorCount: len(msgs), MessageList: msgs}}
	if st.Details.MessageList == nil {
		st.Details.MessageList = []StatusMessage{}
	}
	if len(msgs) > 0 {
		st.Status, st.Message, st.Code = "Failure", fmt.Sprintf("%d problem(s) in the design", len(msgs)), http.StatusBadRequest
	}
	writeJSON(w, st.Code, st)
}
