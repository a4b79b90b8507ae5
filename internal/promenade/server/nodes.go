package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/promenade/builder"
	"github.com/airshipit/airship-go/internal/promenade/docset"
	"github.com/airshipit/airship-go/internal/promenade/nodelabels"
)

// maxLabelsBody bounds the body of PUT /node-labels.
const maxLabelsBody = 1 << 20

// NodeLabelsResponse is the answer to PUT /node-labels/{node}: the
// Airship status fields plus what changed and the node's labels after.
type NodeLabelsResponse struct {
	Kind       string            `json:"kind"`
	APIVersion string            `json:"apiVersion"`
	Status     string            `json:"status"`
	Reason     string            `json:"reason"`
	Message    string            `json:"message"`
	Code       int               `json:"code"`
	Node       string            `json:"node"`
	Added      map[string]string `json:"added"`
	Changed    map[string]string `json:"changed"`
	Removed    []string          `json:"removed"`
	Labels     map[string]string `json:"labels"`
}

func (s *Server) nodeLabels(w http.ResponseWriter, r *http.Request) {
	node := r.PathValue("node")
	if errs := validation.IsDNS1123Subdomain(node); len(errs) > 0 {
		writeError(w, http.StatusBadRequest, "node", fmt.Sprintf("node: %q is not a valid node name: %s", node, strings.Join(errs, "; ")))
		return
	}
	force := false
	if v := r.URL.Query().Get("force"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "force", fmt.Sprintf("force: %q is not a boolean", v))
			return
		}
		force = b
	}
	if s.opts.Kube == nil {
		writeError(w, http.StatusServiceUnavailable, "", "node labels cannot be changed: this server has no Kubernetes credentials (start promenade serve with --kubeconfig, or run it in a cluster)")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxLabelsBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "body", "body: reading the request failed: "+err.Error())
		return
	}
	if len(body) > maxLabelsBody {
		writeError(w, http.StatusRequestEntityTooLarge, "body", fmt.Sprintf("body: larger than %d bytes", maxLabelsBody))
		return
	}
	req, err := nodelabels.Parse(body)
	if err != nil {
		s.labelError(w, err)
		return
	}
	res, err := nodelabels.Apply(r.Context(), s.opts.Kube, node, req, force)
	if err != nil {
		s.labelError(w, err)
		return
	}
	msg := fmt.Sprintf("node %s: %d label(s) added, %d changed, %d removed", node, len(res.Added), len(res.Changed), len(res.Removed))
	if res.Empty() {
		msg = fmt.Sprintf("node %s already has these labels", node)
	}
	writeJSON(w, http.StatusOK, NodeLabelsResponse{
		Kind: "Status", APIVersion: "v1.0", Status: "Success", Reason: "Update node labels", Message: msg, Code: http.StatusOK,
		Node: node, Added: res.Added, Changed: res.Changed, Removed: res.Removed, Labels: res.Labels,
	})
}

func (s *Server) labelError(w http.ResponseWriter, err error) {
	var fe *nodelabels.FieldError
	var forbidden *nodelabels.ForbiddenError
	var nf *nodelabels.NotFoundError
	switch {
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, fe.Field, fe.Error())
	case errors.As(err, &forbidden):
		writeError(w, http.StatusConflict, forbidden.Label, forbidden.Error())
	case errors.As(err, &nf):
		writeError(w, http.StatusNotFound, "node", "node: "+nf.Error())
	case apierrors.IsConflict(err):
		writeError(w, http.StatusConflict, "node", err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, "", "talking to the Kubernetes API failed: "+err.Error())
	}
}

func (s *Server) removalScripts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	hostname, err := required(q, "hostname")
	if err == nil && !hostnameRE.MatchString(hostname) {
		err = badParam("hostname", "%q is not a valid hostname (lower-case letters, digits and '-')", hostname)
	}
	var ref string
	if err == nil {
		ref, err = required(q, "design_ref")
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	set, err := s.loadDesign(r.Context(), ref)
	if err != nil {
		s.fail(w, err)
		return
	}
	script, err := RemovalScript(set, hostname, q)
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/x-shellscript")
	w.Header().Set("Content-Disposition", "attachment; filename="+builder.RemovalScriptName(hostname))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(script)
}

// RemovalScript renders the removal script of a node: one of the design's
// KubernetesNodes, or a node added through join-scripts, described by the
// same parameters (ip, labels.static, labels.dynamic) as its join script.
// The genesis node's is the genesis removal script (which refuses to run
// until other control-plane nodes and etcd members can take over).
func RemovalScript(set *docset.Set, hostname string, q map[string][]string) ([]byte, error) {
	b, err := builder.New(set, builder.Options{})
	if err != nil {
		return nil, badParam("design_ref", "%v", err)
	}
	var g v1.Genesis
	if err := set.One(v1.SchemaGenesis, &g); err == nil && g.Hostname == hostname {
		s, err := b.GenesisRemovalScript()
		if err != nil {
			return nil, badParam("design_ref", "%v", err)
		}
		return s, nil
	}
	for _, n := range b.Nodes() {
		if n.Hostname == hostname {
			s, err := b.RemovalScript(n)
			if err != nil {
				return nil, badParam("design_ref", "%v", err)
			}
			return s, nil
		}
	}
	// A node joined through the API: the same parameters as its join script.
	req, err := ParseJoinRequest(q)
	if err != nil {
		var pe *paramError
		if errors.As(err, &pe) && pe.param == "ip" {
			return nil, badParam("ip", "node %s is not in the design; give the ip (and labels) it was joined with: %s", hostname, pe.msg)
		}
		return nil, err
	}
	b, node, err := addNode(set, req, builder.Options{})
	if err != nil {
		return nil, err
	}
	s, err := b.RemovalScript(node)
	if err != nil {
		return nil, badParam("design_ref", "%v", err)
	}
	return s, nil
}
