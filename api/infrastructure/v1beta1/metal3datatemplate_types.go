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

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
)

// DataTemplateFinalizer keeps a Metal3DataTemplate until no Metal3Data
// rendered from it and no Metal3DataClaim naming it is left.
const DataTemplateFinalizer = "metal3datatemplate.infrastructure.cluster.x-k8s.io"

// Objects a rendered value can be read from (the object field of several
// metaData and networkData items).
const (
	DataObjectMachine       = "machine"
	DataObjectMetal3Machine = "metal3machine"
	DataObjectHost          = "baremetalhost"
)

// MetaDataIndex renders the Metal3Data's index as
// <prefix><offset + index*step><suffix>.
type MetaDataIndex struct {
	// key is the meta-data key set.
	// +required
	Key string `json:"key"`
	// offset is added to the index times step.
	// +optional
	Offset int `json:"offset,omitempty"`
	// step multiplies the index.
	// +kubebuilder:default=1
	// +optional
	Step int `json:"step,omitempty"`
	// prefix is written before the number.
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// suffix is written after the number.
	// +optional
	Suffix string `json:"suffix,omitempty"`
}

// MetaDataFromLabel renders a label of an object; a missing label renders
// as an empty string.
type MetaDataFromLabel struct {
	// key is the meta-data key set.
	// +required
	Key string `json:"key"`
	// object is the object whose label is read.
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	// +required
	Object string `json:"object"`
	// label is the label's name.
	// +required
	Label string `json:"label"`
}

// MetaDataFromAnnotation renders an annotation of an object; a missing
// annotation renders as an empty string.
type MetaDataFromAnnotation struct {
	// key is the meta-data key set.
	// +required
	Key string `json:"key"`
	// object is the object whose annotation is read.
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	// +required
	Object string `json:"object"`
	// annotation is the annotation's name.
	// +required
	Annotation string `json:"annotation"`
}

// MetaDataString renders a fixed string.
type MetaDataString struct {
	// key is the meta-data key set.
	// +required
	Key string `json:"key"`
	// value is the string.
	// +required
	Value string `json:"value"`
}

// MetaDataNamespace renders the Metal3Data's namespace.
type MetaDataNamespace struct {
	// key is the meta-data key set.
	// +required
	Key string `json:"key"`
}

// MetaDataObjectName renders the name of an object.
type MetaDataObjectName struct {
	// key is the meta-data key set.
	// +required
	Key string `json:"key"`
	// object is the object whose name is rendered.
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	// +required
	Object string `json:"object"`
}

// MetaDataHostInterface renders the MAC address of a NIC of the
// BareMetalHost.
type MetaDataHostInterface struct {
	// key is the meta-data key set.
	// +required
	Key string `json:"key"`
	// interface is the NIC's name in the host's status.hardware.nics.
	// +optional
	Interface string `json:"interface,omitempty"`
	// fromBootMAC renders the host's spec.bootMACAddress instead.
	// +optional
	FromBootMAC bool `json:"fromBootMAC,omitempty"`
}

// MetaDataIPAddress renders an address computed from the index. Upstream
// declares it; nothing renders it.
type MetaDataIPAddress struct {
	// key is the meta-data key set.
	// +required
	Key string `json:"key"`
	// start is the first address.
	// +optional
	Start *ipamv1.IPAddressStr `json:"start,omitempty"`
	// end is the last address.
	// +optional
	End *ipamv1.IPAddressStr `json:"end,omitempty"`
	// subnet bounds the addresses.
	// +optional
	Subnet *ipamv1.IPSubnetStr `json:"subnet,omitempty"`
	// step is the distance between two addresses.
	// +kubebuilder:default=1
	// +optional
	Step int `json:"step,omitempty"`
}

// FromPool renders a value of the address allocated from a pool.
type FromPool struct {
	// key is the meta-data key set.
	// +required
	Key string `json:"key"`
	// name is the pool's name, in the Metal3Data's namespace.
	// +required
	Name string `json:"name"`
	// apiGroup is the pool's API group; only ipam.metal3.io (the default)
	// is served. Upstream requires it.
	// +optional
	APIGroup string `json:"apiGroup,omitempty"`
	// kind is the pool's kind; only IPPool (the default) is served.
	// Upstream requires it.
	// +optional
	Kind string `json:"kind,omitempty"`
}

// FromPoolAnnotation names the pool through an annotation of an object.
type FromPoolAnnotation struct {
	// object is the object whose annotation holds the pool's name.
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	// +required
	Object string `json:"object"`
	// annotation is the annotation's name.
	// +required
	Annotation string `json:"annotation"`
}

// MetaData lists the meta-data items to render; each sets one key.
type MetaData struct {
	// strings are fixed values.
	// +optional
	Strings []MetaDataString `json:"strings,omitempty"`
	// objectNames are names of the Machine, Metal3Machine or BareMetalHost.
	// +optional
	ObjectNames []MetaDataObjectName `json:"objectNames,omitempty"`
	// indexes are numbers made from the Metal3Data's index.
	// +optional
	Indexes []MetaDataIndex `json:"indexes,omitempty"`
	// namespaces are the Metal3Data's namespace.
	// +optional
	Namespaces []MetaDataNamespace `json:"namespaces,omitempty"`
	// ipAddressesFromIPPool are addresses allocated from pools.
	// +optional
	IPAddressesFromPool []FromPool `json:"ipAddressesFromIPPool,omitempty"`
	// prefixesFromIPPool are the prefix lengths of addresses allocated
	// from pools.
	// +optional
	PrefixesFromPool []FromPool `json:"prefixesFromIPPool,omitempty"`
	// gatewaysFromIPPool are the gateways of addresses allocated from pools.
	// +optional
	GatewaysFromPool []FromPool `json:"gatewaysFromIPPool,omitempty"`
	// dnsServersFromIPPool allocate from the pools named; as upstream,
	// they render no key.
	// +optional
	DNSServersFromPool []FromPool `json:"dnsServersFromIPPool,omitempty"`
	// fromHostInterfaces are MAC addresses of the host's NICs.
	// +optional
	FromHostInterfaces []MetaDataHostInterface `json:"fromHostInterfaces,omitempty"`
	// fromLabels are labels of the Machine, Metal3Machine or BareMetalHost.
	// +optional
	FromLabels []MetaDataFromLabel `json:"fromLabels,omitempty"`
	// fromAnnotations are annotations of the Machine, Metal3Machine or
	// BareMetalHost.
	// +optional
	FromAnnotations []MetaDataFromAnnotation `json:"fromAnnotations,omitempty"`
}

// NetworkLinkEthernetMacFromAnnotation reads a MAC address from an
// annotation of an object.
type NetworkLinkEthernetMacFromAnnotation struct {
	// object is the object whose annotation holds the MAC address.
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	// +required
	Object string `json:"object"`
	// annotation is the annotation's name.
	// +required
	Annotation string `json:"annotation"`
}

// NetworkLinkEthernetMac is where a link's MAC address comes from; the
// first field set wins, in the order string, fromHostInterface,
// fromAnnotation.
type NetworkLinkEthernetMac struct {
	// string is the MAC address itself.
	// +optional
	String *string `json:"string,omitempty"`
	// fromHostInterface is the name of a NIC in the host's
	// status.hardware.nics.
	// +optional
	FromHostInterface *string `json:"fromHostInterface,omitempty"`
	// fromAnnotation reads the MAC address from an annotation.
	// +optional
	FromAnnotation *NetworkLinkEthernetMacFromAnnotation `json:"fromAnnotation,omitempty"`
}

// NetworkDataLinkEthernet is an ethernet link.
type NetworkDataLinkEthernet struct {
	// type is the link's type.
	// +kubebuilder:validation:Enum=bridge;dvs;hw_veb;hyperv;ovs;tap;vhostuser;vif;phy
	// +required
	Type string `json:"type"`
	// id names the link for the networks that use it.
	// +required
	ID string `json:"id"`
	// name is the interface name cloud-init gives the NIC (renaming the one
	// with macAddress, if given).
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9._-]*$`
	// +optional
	Name string `json:"name,omitempty"`
	// mtu of the link.
	// +kubebuilder:default=1500
	// +kubebuilder:validation:Maximum=9000
	// +optional
	MTU int `json:"mtu,omitempty"`
	// macAddress of the link. Upstream requires it.
	// +optional
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`
}

// NetworkDataLinkBond is a bond of links.
type NetworkDataLinkBond struct {
	// bondMode is the bonding mode.
	// +kubebuilder:validation:Enum="balance-rr";"active-backup";"balance-xor";"broadcast";"balance-tlb";"balance-alb";"802.3ad"
	// +required
	BondMode string `json:"bondMode"`
	// bondXmitHashPolicy is the transmit hash policy of the balance-xor and
	// 802.3ad modes.
	// +kubebuilder:validation:Enum="layer2";"layer3+4";"layer2+3"
	// +optional
	BondXmitHashPolicy string `json:"bondXmitHashPolicy"`
	// id names the link for the networks that use it.
	// +required
	ID string `json:"id"`
	// name is the interface name cloud-init gives the bond.
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9._-]*$`
	// +optional
	Name string `json:"name,omitempty"`
	// mtu of the link.
	// +kubebuilder:default=1500
	// +kubebuilder:validation:Maximum=9000
	// +optional
	MTU int `json:"mtu,omitempty"`
	// macAddress of the bond. Upstream requires it.
	// +optional
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`
	// parameters are further bond settings, passed on as bond_<name>; they
	// may not repeat a setting given by a field.
	// +optional
	Parameters NetworkDataLinkBondParams `json:"parameters,omitempty"`
	// bondLinks are the ids of the bonded links.
	// +optional
	BondLinks []string `json:"bondLinks"`
}

// NetworkDataLinkBondParams are free-form bond settings.
type NetworkDataLinkBondParams map[string]apiextensionsv1.JSON

// NetworkDataLinkVlan is a VLAN on a link.
type NetworkDataLinkVlan struct {
	// vlanID is the VLAN's tag.
	// +kubebuilder:validation:Maximum=4096
	// +required
	VlanID int `json:"vlanID"`
	// id names the link for the networks that use it.
	// +required
	ID string `json:"id"`
	// name is the interface name cloud-init gives the VLAN.
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9._-]*$`
	// +optional
	Name string `json:"name,omitempty"`
	// mtu of the link.
	// +kubebuilder:default=1500
	// +kubebuilder:validation:Maximum=9000
	// +optional
	MTU int `json:"mtu,omitempty"`
	// macAddress of the VLAN interface. Upstream requires it.
	// +optional
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`
	// vlanLink is the id of the link the VLAN is on.
	// +required
	VlanLink string `json:"vlanLink"`
}

// NetworkDataLink lists the links by type.
type NetworkDataLink struct {
	// ethernets are ethernet links.
	// +optional
	Ethernets []NetworkDataLinkEthernet `json:"ethernets,omitempty"`
	// bonds are bonds of links.
	// +optional
	Bonds []NetworkDataLinkBond `json:"bonds,omitempty"`
	// vlans are VLANs on links.
	// +optional
	Vlans []NetworkDataLinkVlan `json:"vlans,omitempty"`
}

// NetworkDataService lists the DNS servers of the host.
type NetworkDataService struct {
	// dns are DNS server addresses.
	// +optional
	DNS []ipamv1.IPAddressStr `json:"dns,omitempty"`
	// dnsFromIPPool is a pool whose DNS servers are added.
	// +optional
	DNSFromIPPool *string `json:"dnsFromIPPool,omitempty"`
}

// NetworkDataServicev4 lists the IPv4 DNS servers of a route.
type NetworkDataServicev4 struct {
	// dns are DNS server addresses.
	// +optional
	DNS []ipamv1.IPAddressv4Str `json:"dns,omitempty"`
	// dnsFromIPPool is a pool whose DNS servers are added.
	// +optional
	DNSFromIPPool *string `json:"dnsFromIPPool,omitempty"`
}

// NetworkDataServicev6 lists the IPv6 DNS servers of a route.
type NetworkDataServicev6 struct {
	// dns are DNS server addresses.
	// +optional
	DNS []ipamv1.IPAddressv6Str `json:"dns,omitempty"`
	// dnsFromIPPool is a pool whose DNS servers are added.
	// +optional
	DNSFromIPPool *string `json:"dnsFromIPPool,omitempty"`
}

// NetworkGatewayv4 is an IPv4 gateway, given or read from a pool; the
// first field set wins, in the order string, fromPoolAnnotation,
// fromPoolRef, fromIPPool.
type NetworkGatewayv4 struct {
	// string is the gateway's address.
	// +optional
	String *ipamv1.IPAddressv4Str `json:"string,omitempty"`
	// fromIPPool is a pool whose gateway is used.
	// +optional
	FromIPPool *string `json:"fromIPPool,omitempty"`
	// fromPoolRef is a pool whose gateway is used.
	// +optional
	FromPoolRef *corev1.TypedLocalObjectReference `json:"fromPoolRef,omitempty"`
	// fromPoolAnnotation names the pool through an annotation.
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`
}

// NetworkGatewayv6 is an IPv6 gateway, given or read from a pool; the
// first field set wins, in the order string, fromPoolAnnotation,
// fromPoolRef, fromIPPool.
type NetworkGatewayv6 struct {
	// string is the gateway's address.
	// +optional
	String *ipamv1.IPAddressv6Str `json:"string,omitempty"`
	// fromIPPool is a pool whose gateway is used.
	// +optional
	FromIPPool *string `json:"fromIPPool,omitempty"`
	// fromPoolRef is a pool whose gateway is used.
	// +optional
	FromPoolRef *corev1.TypedLocalObjectReference `json:"fromPoolRef,omitempty"`
	// fromPoolAnnotation names the pool through an annotation.
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`
}

// NetworkDataRoutev4 is an IPv4 route.
type NetworkDataRoutev4 struct {
	// network is the destination's network address.
	// +required
	Network ipamv1.IPAddressv4Str `json:"network"`
	// prefix is the destination's prefix length.
	// +kubebuilder:validation:Maximum=32
	// +optional
	Prefix int `json:"prefix,omitempty"`
	// gateway is the next hop.
	// +required
	Gateway NetworkGatewayv4 `json:"gateway"`
	// services are DNS servers reached through the route.
	// +optional
	Services NetworkDataServicev4 `json:"services,omitempty"`
}

// NetworkDataRoutev6 is an IPv6 route.
type NetworkDataRoutev6 struct {
	// network is the destination's network address.
	// +required
	Network ipamv1.IPAddressv6Str `json:"network"`
	// prefix is the destination's prefix length.
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix int `json:"prefix,omitempty"`
	// gateway is the next hop.
	// +required
	Gateway NetworkGatewayv6 `json:"gateway"`
	// services are DNS servers reached through the route.
	// +optional
	Services NetworkDataServicev6 `json:"services,omitempty"`
}

// NetworkDataIPv4 is a static IPv4 network whose address comes from a
// pool; the first field set names the pool, in the order
// fromPoolAnnotation, fromPoolRef, ipAddressFromIPPool.
type NetworkDataIPv4 struct {
	// id names the network.
	// +required
	ID string `json:"id"`
	// link is the id of the link the network is on.
	// +required
	Link string `json:"link"`
	// ipAddressFromIPPool is the pool the address comes from.
	// +optional
	IPAddressFromIPPool string `json:"ipAddressFromIPPool,omitempty"`
	// fromPoolRef is the pool the address comes from.
	// +optional
	FromPoolRef *corev1.TypedLocalObjectReference `json:"fromPoolRef,omitempty"`
	// fromPoolAnnotation names the pool through an annotation.
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`
	// routes of the network.
	// +optional
	Routes []NetworkDataRoutev4 `json:"routes,omitempty"`
}

// NetworkDataIPv6 is a static IPv6 network whose address comes from a
// pool; the first field set names the pool, in the order
// fromPoolAnnotation, fromPoolRef, ipAddressFromIPPool.
type NetworkDataIPv6 struct {
	// id names the network.
	// +required
	ID string `json:"id"`
	// link is the id of the link the network is on.
	// +required
	Link string `json:"link"`
	// ipAddressFromIPPool is the pool the address comes from. Upstream
	// requires it.
	// +optional
	IPAddressFromIPPool string `json:"ipAddressFromIPPool,omitempty"`
	// fromPoolRef is the pool the address comes from.
	// +optional
	FromPoolRef *corev1.TypedLocalObjectReference `json:"fromPoolRef,omitempty"`
	// fromPoolAnnotation names the pool through an annotation.
	// +optional
	FromPoolAnnotation *FromPoolAnnotation `json:"fromPoolAnnotation,omitempty"`
	// routes of the network.
	// +optional
	Routes []NetworkDataRoutev6 `json:"routes,omitempty"`
}

// NetworkDataIPv4DHCP is an IPv4 network configured by DHCP.
type NetworkDataIPv4DHCP struct {
	// id names the network.
	// +required
	ID string `json:"id"`
	// link is the id of the link the network is on.
	// +required
	Link string `json:"link"`
	// routes of the network.
	// +optional
	Routes []NetworkDataRoutev4 `json:"routes,omitempty"`
}

// NetworkDataIPv6DHCP is an IPv6 network configured by DHCPv6 or SLAAC.
type NetworkDataIPv6DHCP struct {
	// id names the network.
	// +required
	ID string `json:"id"`
	// link is the id of the link the network is on.
	// +required
	Link string `json:"link"`
	// routes of the network.
	// +optional
	Routes []NetworkDataRoutev6 `json:"routes,omitempty"`
}

// NetworkDataNetwork lists the networks by type.
type NetworkDataNetwork struct {
	// ipv4 are static IPv4 networks.
	// +optional
	IPv4 []NetworkDataIPv4 `json:"ipv4,omitempty"`
	// ipv6 are static IPv6 networks.
	// +optional
	IPv6 []NetworkDataIPv6 `json:"ipv6,omitempty"`
	// ipv4DHCP are IPv4 networks configured by DHCP.
	// +optional
	IPv4DHCP []NetworkDataIPv4DHCP `json:"ipv4DHCP,omitempty"`
	// ipv6DHCP are IPv6 networks configured by DHCPv6.
	// +optional
	IPv6DHCP []NetworkDataIPv6DHCP `json:"ipv6DHCP,omitempty"`
	// ipv6SLAAC are IPv6 networks configured by SLAAC.
	// +optional
	IPv6SLAAC []NetworkDataIPv6DHCP `json:"ipv6SLAAC,omitempty"`
}

// NetworkData is the OpenStack network_data.json form of the host's
// network configuration.
type NetworkData struct {
	// links are the host's interfaces.
	// +optional
	Links NetworkDataLink `json:"links,omitempty"`
	// networks are the addresses on the links.
	// +optional
	Networks NetworkDataNetwork `json:"networks,omitempty"`
	// services are the host's DNS servers.
	// +optional
	Services NetworkDataService `json:"services,omitempty"`
}

// Metal3DataTemplateSpec is what every Metal3Data rendered from the
// template holds.
type Metal3DataTemplateSpec struct {
	// clusterName is the Cluster API Cluster the template belongs to; its
	// pausing pauses the template.
	// +kubebuilder:validation:MinLength=1
	// +required
	ClusterName string `json:"clusterName"`
	// templateReference is kept for upstream's manifests; it is deprecated
	// there and unused here.
	// +optional
	TemplateReference string `json:"templateReference,omitempty"`
	// metaData renders the meta-data Secret; none without it.
	// +optional
	MetaData *MetaData `json:"metaData,omitempty"`
	// networkData renders the network-data Secret; none without it.
	// +optional
	NetworkData *NetworkData `json:"networkData,omitempty"`
}

// Metal3DataTemplateStatus records the index of each claim.
type Metal3DataTemplateStatus struct {
	// lastUpdated is when the status was last written.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
	// indexes maps the name of each Metal3DataClaim to the index of its
	// Metal3Data. The Metal3Data objects (<template>-<index>) are the
	// record; this is their summary.
	// +optional
	Indexes map[string]int `json:"indexes,omitempty"`
}

// Metal3DataTemplate renders, for each Metal3DataClaim that names it, a
// Metal3Data with its own index and the meta-data and network-data
// Secrets of one host.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=metal3datatemplates,scope=Namespaced,categories=cluster-api,shortName=m3dt;m3datatemplate;m3datatemplates;metal3dt;metal3datatemplate
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster API Cluster the template belongs to"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Metal3DataTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Metal3DataTemplateSpec   `json:"spec,omitempty"`
	Status Metal3DataTemplateStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// Metal3DataTemplateList is a list of Metal3DataTemplates.
type Metal3DataTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3DataTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3DataTemplate{}, &Metal3DataTemplateList{})
}
