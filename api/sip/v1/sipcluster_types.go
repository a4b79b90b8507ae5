/*
Copyright The Airship-Go Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// BMHRole is the role a BareMetalHost plays in the tenant cluster. Roles
// are map keys, which a CRD schema cannot restrict: the controller reports
// an unknown one as InvalidSpec.
type BMHRole string

// The roles.
const (
	RoleControlPlane BMHRole = "ControlPlane"
	RoleWorker       BMHRole = "Worker"
)

// Roles are the roles in the order they are scheduled.
var Roles = []BMHRole{RoleControlPlane, RoleWorker}

// Labels SIP puts on the BareMetalHosts it picks (upstream's names, and a
// standby marker of this project's).
const (
	// LabelPrefix is the prefix of every label SIP owns.
	LabelPrefix = "sip.airshipit.org"
	// ClusterNamespaceLabel and ClusterNameLabel name the SIPCluster a host
	// belongs to.
	ClusterNamespaceLabel = LabelPrefix + "/cluster-namespace"
	ClusterNameLabel      = LabelPrefix + "/cluster-name"
	// NodeTypeLabel is the host's role (ControlPlane or Worker).
	NodeTypeLabel = LabelPrefix + "/node-type"
	// StandbyLabel ("true") marks a host kept in reserve for its role.
	StandbyLabel = LabelPrefix + "/standby"
)

// Finalizer is upstream SIP's: a SIPCluster is not gone until its services
// are removed and its hosts released.
const Finalizer = "sip.airship.airshipit.org/finalizer"

// Limits of the API. The CRD's schema refuses what exceeds them (the
// markers below repeat the numbers, which markers cannot reference); the
// controller checks them again for objects stored before the schema did.
const (
	// MaxNameLength: the SIPCluster's name is the value of the label
	// sip.airshipit.org/cluster-name on its hosts and service objects.
	MaxNameLength = 63
	// MaxNodeCount bounds count.active and count.standby of a role.
	MaxNodeCount = 1000
)

// ConnectorTypes are the connector types Dex knows (its ConnectorsConfig).
var ConnectorTypes = []string{"keystone", "mockCallback", "mockPassword", "ldap", "gitea", "github", "gitlab", "google", "oidc", "oauth", "saml", "authproxy", "linkedin", "microsoft", "bitbucket-cloud", "openshift", "atlassian-crowd", "samlExperimental"}

// SIPCluster asks for BareMetalHosts by role and topology for one tenant
// cluster, and for the services that cluster needs.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sipc
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Control plane",type=string,JSONPath=`.status.nodes.ControlPlane.summary`
// +kubebuilder:printcolumn:name="Workers",type=string,JSONPath=`.status.nodes.Worker.summary`
// +kubebuilder:printcolumn:name="Services",type=string,JSONPath=`.status.servicesSummary`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name: at most 63 characters: it is the value of the label sip.airshipit.org/cluster-name on the cluster's hosts and service objects"
type SIPCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   SIPClusterSpec   `json:"spec,omitempty"`
	Status SIPClusterStatus `json:"status,omitempty"`
}

// SIPClusterSpec is what the tenant cluster needs.
type SIPClusterSpec struct {
	// nodes is the set of hosts to pick for each role: ControlPlane,
	// Worker or both.
	// +required
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=2
	// +kubebuilder:validation:XValidation:rule="self.all(k, k == 'ControlPlane' || k == 'Worker')",message="the roles are ControlPlane and Worker"
	Nodes map[BMHRole]NodeSet `json:"nodes,omitempty"`
	// services run for the tenant cluster.
	// +optional
	Services SIPClusterServices `json:"services"`
}

// NodeSet picks the hosts of one role.
type NodeSet struct {
	// labelSelector picks the candidate BareMetalHosts, of every
	// namespace. It must not be empty: that would pick any host.
	// +required
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="must not be empty: it would pick any host"
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`
	// topologyKey is a host label: at most one host of the cluster is
	// picked per distinct value of it (a rack, or the physical host of a
	// VM), as in a pod anti-affinity rule. Empty: no such constraint.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^(([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	TopologyKey string `json:"topologyKey,omitempty"`
	// count of hosts to pick.
	// +optional
	Count *NodeCount `json:"count,omitempty"`
}

// NodeCount is how many hosts a role has: active ones join the cluster,
// standby ones wait to replace a failed active one.
type NodeCount struct {
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Active int `json:"active,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Standby int `json:"standby,omitempty"`
}

// SIPClusterServices are the services SIP runs for the tenant cluster, in
// the SIPCluster's namespace.
type SIPClusterServices struct {
	// loadBalancerControlPlane: HAProxy in front of the control-plane
	// hosts' API servers (port 6443).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	LoadBalancerControlPlane []LoadBalancerServiceControlPlane `json:"loadBalancerControlPlane,omitempty"`
	// loadBalancerWorker: HAProxy in front of the worker hosts' node ports.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	LoadBalancerWorker []LoadBalancerServiceWorker `json:"loadBalancerWorker,omitempty"`
	// jumpHost: an SSH jump host to the cluster's hosts and their BMCs.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	JumpHost []JumpHostService `json:"jumpHost,omitempty"`
	// auth: an OIDC provider (Dex) for the tenant cluster's API server.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Auth []AuthService `json:"auth,omitempty"`
}

// SIPClusterService is what every service has.
type SIPClusterService struct {
	// image of the service's container.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image"`
	// nodeLabels select the nodes of this (the management) cluster the
	// service's pods run on.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	// tolerations of the service's pods, for nodes of this (the management)
	// cluster that nodeLabels pick and that are tainted. An extension over
	// upstream SIP.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// nodeInterfaceId is the network of the hosts' networkData (its id,
	// or the id of its link) whose address the service uses.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	NodeInterface string `json:"nodeInterfaceId,omitempty"`
	// clusterIP of the service's Service; empty lets Kubernetes pick.
	// +optional
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="self == '' || isIP(self)",message="must be an IP address"
	ClusterIP *string `json:"clusterIP,omitempty"`
}

// LoadBalancerServiceControlPlane is a load balancer of the tenant API servers.
type LoadBalancerServiceControlPlane struct {
	SIPClusterService `json:",inline"`
	// nodePort the load balancer is reached on: a node port, 30000-32767.
	// +kubebuilder:validation:Minimum=30000
	// +kubebuilder:validation:Maximum=32767
	NodePort int `json:"nodePort"`
}

// LoadBalancerServiceWorker is a load balancer of the workers' node ports.
type LoadBalancerServiceWorker struct {
	SIPClusterService `json:",inline"`
	// nodePortRange is the range of node ports balanced over the workers,
	// each reached on the same port of the load balancer.
	NodePortRange PortRange `json:"nodePortRange"`
}

// PortRange is a range of node ports, both ends included.
//
// +kubebuilder:validation:XValidation:rule="self.start <= self.end",message="start must not be after end"
type PortRange struct {
	// +kubebuilder:validation:Minimum=30000
	// +kubebuilder:validation:Maximum=32767
	Start int `json:"start"`
	// +kubebuilder:validation:Minimum=30000
	// +kubebuilder:validation:Maximum=32767
	End int `json:"end"`
}

// JumpHostService is an SSH jump host.
type JumpHostService struct {
	SIPClusterService `json:",inline"`
	// nodePort the jump host's SSH is reached on: a node port, 30000-32767.
	// +kubebuilder:validation:Minimum=30000
	// +kubebuilder:validation:Maximum=32767
	NodePort int `json:"nodePort"`
	// bmc says how the jump host's power scripts reach the hosts' BMCs.
	// +optional
	BMC *BMCOpts `json:"bmc,omitempty"`
	// sshAuthorizedKeys may log in to the jump host.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=16384
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys,omitempty"`
	// nodeSSHPrivateKeys names a Secret in the SIPCluster's namespace whose
	// keys are SSH private keys to the hosts, mounted into the jump host.
	// A name only: a Secret of another namespace cannot be named.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	NodeSSHPrivateKeys string `json:"nodeSSHPrivateKeys"`
}

// BMCOpts configure BMC access from the jump host.
type BMCOpts struct {
	// proxy: reach the BMCs through a proxy on the jump host rather than
	// directly.
	// +optional
	Proxy bool `json:"proxy,omitempty"`
}

// AuthService is an OIDC provider (Dex) for the tenant cluster.
type AuthService struct {
	SIPClusterService `json:",inline"`
	// nodePort the provider is reached on: a node port, 30000-32767.
	// +kubebuilder:validation:Minimum=30000
	// +kubebuilder:validation:Maximum=32767
	NodePort int `json:"nodePort"`
	// issuer is the provider's issuer URL, as the tenant API server's
	// --oidc-issuer-url.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	Issuer string `json:"issuer"`
	// staticClients are the OAuth2 clients; the first is the tenant API
	// server's audience (--oidc-client-id). At least one.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	StaticClients []OIDCClient `json:"staticClients,omitempty"`
	// connectors are Dex connectors (upstream identity providers). At
	// least one: Dex does not start without one.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Connectors []OIDCConnector `json:"connectors,omitempty"`
	// usernameClaim and groupsClaim are the ID token claims the tenant API
	// server reads (--oidc-username-claim, --oidc-groups-claim).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	UsernameClaim string `json:"usernameClaim,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=256
	GroupsClaim string `json:"groupsClaim,omitempty"`
}

// OIDCClient is a static OAuth2 client of the provider.
type OIDCClient struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	ID string `json:"id"`
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=2048
	RedirectURIs []string `json:"redirectURIs,omitempty"`
	// secretRef is the key of a Secret in the SIPCluster's namespace
	// holding the client's secret; it never appears in a ConfigMap.
	SecretRef SecretKeyRef `json:"secretRef"`
}

// SecretKeyRef is a key of a Secret in the SIPCluster's namespace. It has
// no namespace: a Secret of another namespace cannot be named.
type SecretKeyRef struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// OIDCConnector is a Dex connector.
type OIDCConnector struct {
	// type is one of Dex's connector types.
	// +kubebuilder:validation:Enum=keystone;mockCallback;mockPassword;ldap;gitea;github;gitlab;google;oidc;oauth;saml;authproxy;linkedin;microsoft;bitbucket-cloud;openshift;atlassian-crowd;samlExperimental
	Type string `json:"type"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	ID string `json:"id"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// config is the connector's own configuration, as Dex documents it,
	// without its secrets: it is copied as written into the Dex
	// configuration and stays readable in this object. Give passwords and
	// client secrets by configSecrets.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Config *runtime.RawExtension `json:"config,omitempty"`
	// configSecrets set fields of config from Secrets of the SIPCluster's
	// namespace (an LDAP bindPW, an OIDC clientSecret): SIP writes the
	// value into the Dex configuration, which is a Secret, and nowhere else.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=field
	ConfigSecrets []ConnectorConfigSecret `json:"configSecrets,omitempty"`
}

// ConnectorConfigSecret is one field of a connector's config whose value is
// a key of a Secret in the SIPCluster's namespace.
type ConnectorConfigSecret struct {
	// field is the config field to set: a key of config, or a dotted path
	// of keys into nested objects (each one an object or absent). It must
	// not also be set in config.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`
	Field string `json:"field"`
	// secretRef is the Secret and key holding the value, a string.
	SecretRef SecretKeyRef `json:"secretRef"`
}

// SIPClusterStatus is what SIP last did for the cluster.
type SIPClusterStatus struct {
	// conditions: Ready, with upstream's reasons (Progressing,
	// Unschedulable, UnableToApplyLabels, UnableToDecommission,
	// InfraServiceFailure, ReconciliationSucceeded) and InvalidSpec; and
	// Stalled, True with reason InvalidSpec while the spec is invalid.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// nodes are the hosts picked per role.
	// +optional
	Nodes map[BMHRole]RoleStatus `json:"nodes,omitempty"`
	// services report each service's readiness.
	// +optional
	Services []ServiceStatus `json:"services,omitempty"`
	// servicesSummary is "<ready>/<total>" of services.
	// +optional
	ServicesSummary string `json:"servicesSummary,omitempty"`
	// oidc is what the tenant API server needs to trust the auth service.
	// +optional
	OIDC *OIDCStatus `json:"oidc,omitempty"`
}

// RoleStatus are the hosts of one role.
type RoleStatus struct {
	// active and standby are the hosts' names.
	// +optional
	Active []string `json:"active,omitempty"`
	// +optional
	Standby []string `json:"standby,omitempty"`
	// summary is "<active>/<wanted active> active, <standby>/<wanted standby> standby".
	// +optional
	Summary string `json:"summary,omitempty"`
}

// ServiceStatus is one service's readiness.
type ServiceStatus struct {
	// name of the service's Deployment and Service.
	Name string `json:"name"`
	// type: LoadBalancerControlPlane, LoadBalancerWorker, JumpHost or Auth.
	Type string `json:"type"`
	// ready: the Deployment is Available with its current configuration.
	Ready bool `json:"ready"`
	// +optional
	Message string `json:"message,omitempty"`
}

// OIDCStatus holds the tenant API server's OIDC settings.
type OIDCStatus struct {
	IssuerURL string `json:"issuerURL"`
	ClientID  string `json:"clientID"`
	// apiServerArgs are the matching kube-apiserver flags.
	APIServerArgs []string `json:"apiServerArgs"`
}

// SIPClusterList is a list of SIPClusters.
//
// +kubebuilder:object:root=true
type SIPClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SIPCluster `json:"items"`
}

// Ready condition and its reasons (upstream SIP's).
const (
	ConditionTypeReady = "Ready"
	// ConditionTypeStalled is True, kstatus style, while the controller
	// cannot make progress without a change to the spec (reason
	// InvalidSpec); absent otherwise.
	ConditionTypeStalled = "Stalled"

	ReasonTypeProgressing             = "Progressing"
	ReasonTypeUnschedulable           = "Unschedulable"
	ReasonTypeUnableToApplyLabels     = "UnableToApplyLabels"
	ReasonTypeUnableToDecommission    = "UnableToDecommission"
	ReasonTypeInfraServiceFailure     = "InfraServiceFailure"
	ReasonTypeReconciliationSucceeded = "ReconciliationSucceeded"
	// ReasonTypeInvalidSpec: a field of the spec is wrong; the message names it.
	ReasonTypeInvalidSpec = "InvalidSpec"
)

func init() {
	objectTypes = append(objectTypes, &SIPCluster{}, &SIPClusterList{})
}
