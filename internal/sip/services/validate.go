package services

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

// The node port range of a default API server: a NodePort Service's node
// ports must be in it.
const (
	minNodePort = 30000
	maxNodePort = 32767
)

// Validate checks spec.services. Each fault is reported with its field path
// (spec.services.loadBalancerControlPlane[0].nodePort, ...), all at once.
func Validate(spec sipv1.SIPClusterSpec) error {
	root := field.NewPath("spec", "services")
	s := spec.Services
	v := &validator{ports: map[int]*field.Path{}}
	for i, lb := range s.LoadBalancerControlPlane {
		p := root.Child("loadBalancerControlPlane").Index(i)
		v.service(p, lb.SIPClusterService, true)
		v.nodePort(p.Child("nodePort"), lb.NodePort)
	}
	for i, lb := range s.LoadBalancerWorker {
		p := root.Child("loadBalancerWorker").Index(i)
		v.service(p, lb.SIPClusterService, true)
		v.portRange(p.Child("nodePortRange"), lb.NodePortRange)
	}
	for i, jh := range s.JumpHost {
		p := root.Child("jumpHost").Index(i)
		v.service(p, jh.SIPClusterService, true)
		v.nodePort(p.Child("nodePort"), jh.NodePort)
		v.jumpHost(p, jh)
	}
	for i, a := range s.Auth {
		p := root.Child("auth").Index(i)
		v.service(p, a.SIPClusterService, false)
		v.nodePort(p.Child("nodePort"), a.NodePort)
		v.auth(p, a)
	}
	return v.errs.ToAggregate()
}

type validator struct {
	errs field.ErrorList
	// ports are the node ports taken so far, by the field taking them: a
	// node port serves one Service only.
	ports map[int]*field.Path
}

func (v *validator) add(errs ...*field.Error) { v.errs = append(v.errs, errs...) }

// service checks what every service has; needsInterface: the service
// reaches the hosts at their address on nodeInterfaceId.
func (v *validator) service(p *field.Path, s sipv1.SIPClusterService, needsInterface bool) {
	if strings.TrimSpace(s.Image) == "" {
		v.add(field.Required(p.Child("image"), "the service's container image"))
	}
	if needsInterface && s.NodeInterface == "" {
		v.add(field.Required(p.Child("nodeInterfaceId"), "the network of the hosts' networkData whose address the service uses"))
	}
	v.add(metav1validation.ValidateLabels(s.NodeLabels, p.Child("nodeLabels"))...)
	for i, t := range s.Tolerations {
		v.toleration(p.Child("tolerations").Index(i), t)
	}
	if s.ClusterIP != nil && *s.ClusterIP != "" && net.ParseIP(*s.ClusterIP) == nil {
		v.add(field.Invalid(p.Child("clusterIP"), *s.ClusterIP, "must be an IP address (a NodePort Service cannot be headless)"))
	}
}

// toleration checks a toleration of a service's pods as the API server
// checks a pod's, so that a bad one is reported on the SIPCluster rather
// than by a Deployment whose pods never come.
func (v *validator) toleration(p *field.Path, t corev1.Toleration) {
	if t.Key != "" {
		for _, msg := range validation.IsQualifiedName(t.Key) {
			v.add(field.Invalid(p.Child("key"), t.Key, msg))
		}
	}
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
		if t.Key == "" {
			v.add(field.Invalid(p.Child("operator"), t.Operator, "must be Exists when key is empty (a toleration of every taint)"))
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			v.add(field.Invalid(p.Child("value"), t.Value, msg))
		}
	case corev1.TolerationOpExists:
		if t.Value != "" {
			v.add(field.Invalid(p.Child("value"), t.Value, "must be empty when operator is Exists"))
		}
	default:
		v.add(field.NotSupported(p.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpExists, corev1.TolerationOpEqual}))
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		v.add(field.NotSupported(p.Child("effect"), t.Effect,
			[]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		v.add(field.Invalid(p.Child("tolerationSeconds"), *t.TolerationSeconds, "may be set only when effect is NoExecute"))
	}
}

// nodePort checks that port is a node port no other field took.
func (v *validator) nodePort(p *field.Path, port int) {
	if port < minNodePort || port > maxNodePort {
		v.add(field.Invalid(p, port, fmt.Sprintf("must be a node port, in %d-%d", minNodePort, maxNodePort)))
		return
	}
	if other, ok := v.ports[port]; ok {
		v.add(field.Invalid(p, port, fmt.Sprintf("is also the node port of %s", other)))
		return
	}
	v.ports[port] = p
}

func (v *validator) portRange(p *field.Path, r sipv1.PortRange) {
	ok := true
	for _, e := range []struct {
		name string
		port int
	}{{"start", r.Start}, {"end", r.End}} {
		if e.port < minNodePort || e.port > maxNodePort {
			v.add(field.Invalid(p.Child(e.name), e.port, fmt.Sprintf("must be a node port, in %d-%d", minNodePort, maxNodePort)))
			ok = false
		}
	}
	if !ok {
		return
	}
	if r.Start > r.End {
		v.add(field.Invalid(p, fmt.Sprintf("%d-%d", r.Start, r.End), "start must not be after end"))
		return
	}
	for port := r.Start; port <= r.End; port++ {
		if other, taken := v.ports[port]; taken {
			v.add(field.Invalid(p, fmt.Sprintf("%d-%d", r.Start, r.End), fmt.Sprintf("port %d is also the node port of %s", port, other)))
			return
		}
	}
	for port := r.Start; port <= r.End; port++ {
		v.ports[port] = p
	}
}

func (v *validator) jumpHost(p *field.Path, jh sipv1.JumpHostService) {
	kp := p.Child("nodeSSHPrivateKeys")
	if jh.NodeSSHPrivateKeys == "" {
		v.add(field.Required(kp, "the name of the Secret holding SSH private keys to the hosts"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(jh.NodeSSHPrivateKeys) {
			v.add(field.Invalid(kp, jh.NodeSSHPrivateKeys, msg))
		}
	}
	for j, k := range jh.SSHAuthorizedKeys {
		if _, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(k)); err != nil || strings.TrimSpace(string(rest)) != "" {
			detail := "must be one public key in authorized_keys format"
			if err != nil {
				detail += ": " + err.Error()
			}
			v.add(&field.Error{Type: field.ErrorTypeInvalid, Field: p.Child("sshAuthorizedKeys").Index(j).String(), BadValue: field.OmitValueType{}, Detail: detail})
		}
	}
}

func (v *validator) auth(p *field.Path, a sipv1.AuthService) {
	v.issuer(p.Child("issuer"), a.Issuer)
	cp := p.Child("staticClients")
	if len(a.StaticClients) == 0 {
		v.add(field.Required(cp, "at least one client: the first is the tenant API server's --oidc-client-id"))
	}
	ids := map[string]bool{}
	for j, c := range a.StaticClients {
		p := cp.Index(j)
		switch {
		case c.ID == "":
			v.add(field.Required(p.Child("id"), ""))
		case ids[c.ID]:
			v.add(field.Duplicate(p.Child("id"), c.ID))
		}
		ids[c.ID] = true
		for k, u := range c.RedirectURIs {
			if pu, err := url.Parse(u); err != nil || pu.Scheme == "" {
				v.add(field.Invalid(p.Child("redirectURIs").Index(k), u, "must be an absolute URL"))
			}
		}
		v.secretKeyRef(p.Child("secretRef"), c.SecretRef, "the client's secret")
	}
	np := p.Child("connectors")
	if len(a.Connectors) == 0 {
		v.add(field.Required(np, "at least one connector: Dex does not start without one"))
	}
	connIDs := map[string]bool{}
	for j, c := range a.Connectors {
		p := np.Index(j)
		if c.Type == "" {
			v.add(field.Required(p.Child("type"), ""))
		}
		switch {
		case c.ID == "":
			v.add(field.Required(p.Child("id"), ""))
		case connIDs[c.ID]:
			v.add(field.Duplicate(p.Child("id"), c.ID))
		}
		connIDs[c.ID] = true
		if c.Name == "" {
			v.add(field.Required(p.Child("name"), ""))
		}
		obj := map[string]any{}
		if c.Config != nil && len(c.Config.Raw) > 0 {
			if err := json.Unmarshal(c.Config.Raw, &obj); err != nil {
				v.add(&field.Error{Type: field.ErrorTypeInvalid, Field: p.Child("config").String(), BadValue: field.OmitValueType{}, Detail: "must be an object"})
				continue
			}
			if obj == nil { // null: no config
				obj = map[string]any{}
			}
		}
		fields := map[string]bool{}
		for k, cs := range c.ConfigSecrets {
			sp := p.Child("configSecrets").Index(k)
			v.secretKeyRef(sp.Child("secretRef"), cs.SecretRef, "the value of "+cs.Field)
			if fields[cs.Field] {
				v.add(field.Duplicate(sp.Child("field"), cs.Field))
				continue
			}
			fields[cs.Field] = true
			if !configFieldRE.MatchString(cs.Field) {
				v.add(field.Invalid(sp.Child("field"), cs.Field, "must be keys of letters, digits, '_' and '-', joined by '.'"))
				continue
			}
			// Set on a copy of config, as the build will: a path through a
			// value that is no object, or a field config sets too, is an error.
			if err := setConfigField(obj, cs.Field, ""); err != nil {
				v.add(field.Invalid(sp.Child("field"), cs.Field, err.Error()))
			}
		}
	}
}

// configFieldRE is a configSecrets field: the CRD's pattern.
var configFieldRE = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

// secretKeyRef checks a reference to a key of a Secret of the cluster's
// namespace; what names what the key holds.
func (v *validator) secretKeyRef(p *field.Path, ref sipv1.SecretKeyRef, what string) {
	if ref.Name == "" {
		v.add(field.Required(p.Child("name"), "the Secret holding "+what))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Name) {
			v.add(field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	if ref.Key == "" {
		v.add(field.Required(p.Child("key"), "the key of the Secret holding "+what))
	} else {
		for _, msg := range validation.IsConfigMapKey(ref.Key) {
			v.add(field.Invalid(p.Child("key"), ref.Key, msg))
		}
	}
}

// issuer must be an https URL, as the API server requires; http only on
// loopback, for tests. An issuer has no query nor fragment (OpenID Connect
// Discovery).
func (v *validator) issuer(p *field.Path, issuer string) {
	if issuer == "" {
		v.add(field.Required(p, "the provider's issuer URL"))
		return
	}
	u, err := url.Parse(issuer)
	switch {
	case err != nil || u.Host == "":
		v.add(field.Invalid(p, issuer, "must be an absolute https URL"))
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		v.add(field.Invalid(p, issuer, "must have no user information, query nor fragment"))
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		v.add(field.Invalid(p, issuer, "must be an https URL (http only on a loopback address)"))
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
