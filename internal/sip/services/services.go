package services

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

// ServiceLabel names the service an object belongs to. With
// sipv1.ClusterNameLabel it selects the service's pods.
const ServiceLabel = sipv1.LabelPrefix + "/service"

// ConfigHashAnnotation on a pod template is the SHA-256 of the configuration
// the pod reads when it starts, so that a change to it rolls the pods.
const ConfigHashAnnotation = sipv1.LabelPrefix + "/config-sha256"

// Service types, as in ServiceStatus.Type.
const (
	TypeLoadBalancerControlPlane = "LoadBalancerControlPlane"
	TypeLoadBalancerWorker       = "LoadBalancerWorker"
	TypeJumpHost                 = "JumpHost"
	TypeAuth                     = "Auth"
)

// namePrefix is the first part of the name of each type's objects
// (upstream SIP's, which named them <prefix>-<cluster>).
var namePrefix = map[string]string{
	TypeLoadBalancerControlPlane: "loadbalancer-controlplane",
	TypeLoadBalancerWorker:       "loadbalancer-worker",
	TypeJumpHost:                 "jumphost",
	TypeAuth:                     "auth",
}

// Host is one BareMetalHost picked for the cluster, with what SIP extracted
// from it.
type Host struct {
	// Name is the BareMetalHost's name.
	Name    string
	Role    sipv1.BMHRole
	Standby bool
	// IPs maps a network id (or link id) of the host's networkData to its
	// IP address, without a prefix length.
	IPs map[string]string
	// BMCAddress is spec.bmc.address, such as
	// redfish+http://127.0.0.1:8000/redfish/v1/Systems/node01.
	BMCAddress string
	// BMCUsername and BMCPassword come from the BMC Secret; they are only
	// ever written into a Secret.
	BMCUsername, BMCPassword string
}

// Inputs are what Build reads.
type Inputs struct {
	Cluster *sipv1.SIPCluster
	// Hosts are every picked host, active and standby, sorted by name.
	Hosts []Host
	// SSHKeys[i] is the data of the Secret spec.services.jumpHost[i].nodeSSHPrivateKeys
	// names (file name -> key); nil, or a missing index, when that Secret
	// is absent. Only the names of the entries holding a private key are
	// used (as IdentityFile); no key is ever written anywhere.
	SSHKeys []map[string][]byte
	// ConnectorSecrets are the Secrets of the cluster's namespace that
	// spec.services.auth[].connectors[].configSecrets name, by name; a
	// missing one is absent. Their values are written into the Dex
	// configuration Secret only.
	ConnectorSecrets map[string]*corev1.Secret
}

// Build returns the desired objects of every service of in.Cluster
// (ConfigMaps, Secrets, Deployments and Services, in that order per
// service), each labelled with the cluster's name and the service's, owned
// by the SIPCluster and in its namespace; the status of each service, not
// ready (the controller sets readiness from the Deployments); and the
// OIDCStatus of auth[0], nil without auth. It checks the spec with Validate
// first. Errors name the field path and, when a host is at fault, the host;
// every fault is reported, not only the first.
func Build(in Inputs) (objs []client.Object, svcs []sipv1.ServiceStatus, oidc *sipv1.OIDCStatus, err error) {
	c := in.Cluster
	if c == nil {
		return nil, nil, nil, errors.New("no SIPCluster to build services for")
	}
	if err := Validate(c.Spec); err != nil {
		return nil, nil, nil, err
	}
	// The cluster's name is a label value on every object.
	if msgs := content.IsLabelValue(c.Name); len(msgs) > 0 {
		return nil, nil, nil, fmt.Errorf("metadata.name %q cannot be the value of label %s: %s", c.Name, sipv1.ClusterNameLabel, strings.Join(msgs, "; "))
	}
	b := &builder{cluster: c, hosts: sortedHosts(in.Hosts), connectorSecrets: in.ConnectorSecrets}
	root := field.NewPath("spec", "services")
	var errs []error
	add := func(o []client.Object, st sipv1.ServiceStatus, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		objs = append(objs, o...)
		svcs = append(svcs, st)
	}
	s := c.Spec.Services
	for i, lb := range s.LoadBalancerControlPlane {
		add(b.controlPlaneLB(root.Child("loadBalancerControlPlane").Index(i), i, lb))
	}
	for i, lb := range s.LoadBalancerWorker {
		add(b.workerLB(root.Child("loadBalancerWorker").Index(i), i, lb))
	}
	for i, jh := range s.JumpHost {
		var keys map[string][]byte
		if i < len(in.SSHKeys) {
			keys = in.SSHKeys[i]
		}
		add(b.jumpHost(root.Child("jumpHost").Index(i), i, jh, keys))
	}
	for i, a := range s.Auth {
		add(b.auth(root.Child("auth").Index(i), i, a))
	}
	if len(errs) > 0 {
		return nil, nil, nil, errors.Join(errs...)
	}
	if len(s.Auth) > 0 {
		oidc = oidcStatus(s.Auth[0])
	}
	return objs, svcs, oidc, nil
}

// ServiceNames returns the names Build gives the services of c, in Build's
// order: control-plane load balancers, worker load balancers, jump hosts,
// auth. Each names a Deployment, a Service and a ConfigMap.
func ServiceNames(c *sipv1.SIPCluster) []string {
	var out []string
	s := c.Spec.Services
	for i := range s.LoadBalancerControlPlane {
		out = append(out, serviceName(TypeLoadBalancerControlPlane, c.Name, i))
	}
	for i := range s.LoadBalancerWorker {
		out = append(out, serviceName(TypeLoadBalancerWorker, c.Name, i))
	}
	for i := range s.JumpHost {
		out = append(out, serviceName(TypeJumpHost, c.Name, i))
	}
	for i := range s.Auth {
		out = append(out, serviceName(TypeAuth, c.Name, i))
	}
	return out
}

// serviceName is <prefix>-<cluster>-<i>. The index is always there: as it
// holds no "-", the name splits back into one (cluster, index) pair only. A
// name that is not a DNS-1035 label (a Service's name must be one) is
// reduced to one and suffixed with a hash of the full name.
func serviceName(typ, cluster string, i int) string {
	name := fmt.Sprintf("%s-%s-%d", namePrefix[typ], cluster, i)
	if len(validation.IsDNS1035Label(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := fmt.Sprintf("-%d-%s", i, hex.EncodeToString(sum[:4]))
	var sb strings.Builder
	for _, r := range strings.ToLower(cluster) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('-')
		}
	}
	base := namePrefix[typ] + "-" + sb.String()
	if limit := validation.DNS1035LabelMaxLength - len(suffix); len(base) > limit {
		base = base[:limit]
	}
	return strings.TrimRight(base, "-") + suffix
}

func sortedHosts(hosts []Host) []Host {
	out := slices.Clone(hosts)
	slices.SortFunc(out, func(a, b Host) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// activeHosts are the hosts of role that are not standby.
func activeHosts(hosts []Host, role sipv1.BMHRole) []Host {
	var out []Host
	for _, h := range hosts {
		if h.Role == role && !h.Standby {
			out = append(out, h)
		}
	}
	return out
}
