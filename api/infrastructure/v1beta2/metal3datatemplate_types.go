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

package v1beta2

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
)

// DataTemplateFinalizer keeps a Metal3DataTemplate until no Metal3Data
// rendered from it is left.
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
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Key string `json:"key,omitempty"`
	// offset is added to the index times step.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Offset *int32 `json:"offset,omitempty"`
	// step multiplies the index.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	Step int32 `json:"step,omitempty"`
	// prefix is written before the number.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Prefix string `json:"prefix,omitempty"`
	// suffix is written after the number.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Suffix string `json:"suffix,omitempty"`
}

// IndexEntry is the index a template gave one claim.
type IndexEntry struct {
	// name is the Metal3DataClaim's name (the Metal3Machine's).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Name string `json:"name,omitempty"`
	// index is the index given.
	// +required
	// +kubebuilder:validation:Minimum=0
	Index *int32 `json:"index,omitempty"`
}

// MetaDataFromLabel renders a label of an object; a missing label renders
// as an empty string.
type MetaDataFromLabel struct {
	// key is the meta-data key set.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Key string `json:"key,omitempty"`
	// object is the object whose label is read.
	// +required
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	Object string `json:"object,omitempty"`
	// label is the label's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Label string `json:"label,omitempty"`
}

// MetaDataFromAnnotation renders an annotation of an object; a missing
// annotation renders as an empty string.
type MetaDataFromAnnotation struct {
	// key is the meta-data key set.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Key string `json:"key,omitempty"`
	// object is the object whose annotation is read.
	// +required
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	Object string `json:"object,omitempty"`
	// annotation is the annotation's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Annotation string `json:"annotation,omitempty"`
}

// MetaDataString renders a fixed string.
type MetaDataString struct {
	// key is the meta-data key set.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Key string `json:"key,omitempty"`
	// value is the string.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Value string `json:"value,omitempty"`
}

// MetaDataNamespace renders the Metal3Data's namespace.
type MetaDataNamespace struct {
	// key is the meta-data key set.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Key string `json:"key,omitempty"`
}

// MetaDataObjectName renders the name of an object.
type MetaDataObjectName struct {
	// key is the meta-data key set.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Key string `json:"key,omitempty"`
	// object is the object whose name is rendered.
	// +required
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	Object string `json:"object,omitempty"`
}

// MetaDataHostInterface renders the MAC address of a NIC of the
// BareMetalHost.
type MetaDataHostInterface struct {
	// key is the meta-data key set.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Key string `json:"key,omitempty"`
	// interface is the NIC's name in the host's status.hardware.nics.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Interface string `json:"interface,omitempty"`
	// fromBootMAC renders the host's spec.bootMACAddress instead.
	// +optional
	FromBootMAC *bool `json:"fromBootMAC,omitempty"` //nolint:tagliatelle // upstream's name
}

// MetaDataIPAddress renders an address computed from the index. Upstream
// declares it; nothing renders it.
type MetaDataIPAddress struct {
	// key is the meta-data key set.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Key string `json:"key,omitempty"`
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
	// +kubebuilder:validation:Minimum=1
	// +optional
	Step int32 `json:"step,omitempty"`
}

// FromPool renders a value of the address allocated from a pool.
type FromPool struct {
	// key is the meta-data key set.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Key string `json:"key,omitempty"`
	// name is the pool's name, in the Metal3Data's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Name string `json:"name,omitempty"`
	// apiGroup is the pool's API group.
	// +optional
	// +kubebuilder:default=ipam.metal3.io
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	APIGroup string `json:"apiGroup,omitempty"`
	// kind is the pool's kind.
	// +optional
	// +kubebuilder:default=IPPool
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Kind string `json:"kind,omitempty"`
}

// FromPoolAnnotation names the pool through an annotation of an object.
type FromPoolAnnotation struct {
	// object is the object whose annotation holds the pool's name.
	// +required
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	Object string `json:"object,omitempty"`
	// annotation is the annotation's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Annotation string `json:"annotation,omitempty"`
}

// MetaData lists the meta-data items to render; each sets one key, and a
// key appears once per list.
type MetaData struct {
	// strings are fixed values.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	Strings []MetaDataString `json:"strings,omitempty"`
	// objectNames are names of the Machine, Metal3Machine or BareMetalHost.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	ObjectNames []MetaDataObjectName `json:"objectNames,omitempty"`
	// indexes are numbers made from the Metal3Data's index.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	Indexes []MetaDataIndex `json:"indexes,omitempty"`
	// namespaces are the Metal3Data's namespace.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	Namespaces []MetaDataNamespace `json:"namespaces,omitempty"`
	// ipAddressesFromPool are addresses allocated from pools
	// (ipAddressesFromIPPool in v1beta1).
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	IPAddressesFromPool []FromPool `json:"ipAddressesFromPool,omitempty"`
	// prefixesFromPool are the prefix lengths of addresses allocated from
	// pools (prefixesFromIPPool in v1beta1).
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	PrefixesFromPool []FromPool `json:"prefixesFromPool,omitempty"`
	// gatewaysFromPool are the gateways of addresses allocated from pools
	// (gatewaysFromIPPool in v1beta1).
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	GatewaysFromPool []FromPool `json:"gatewaysFromPool,omitempty"`
	// dnsServersFromPool are the DNS servers of pools
	// (dnsServersFromIPPool in v1beta1).
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	DNSServersFromPool []FromPool `json:"dnsServersFromPool,omitempty"`
	// fromHostInterfaces are MAC addresses of the host's NICs.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	FromHostInterfaces []MetaDataHostInterface `json:"fromHostInterfaces,omitempty"`
	// fromLabels are labels of the Machine, Metal3Machine or BareMetalHost.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	FromLabels []MetaDataFromLabel `json:"fromLabels,omitempty"`
	// fromAnnotations are annotations of the Machine, Metal3Machine or
	// BareMetalHost.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	FromAnnotations []MetaDataFromAnnotation `json:"fromAnnotations,omitempty"`
}

// NetworkLinkEthernetMacFromAnnotation reads a MAC address from an
// annotation of an object.
type NetworkLinkEthernetMacFromAnnotation struct {
	// object is the object whose annotation holds the MAC address.
	// +required
	// +kubebuilder:validation:Enum=machine;metal3machine;baremetalhost
	Object string `json:"object,omitempty"`
	// annotation is the annotation's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Annotation string `json:"annotation,omitempty"`
}

// NetworkLinkEthernetMac is where a link's MAC address comes from.
type NetworkLinkEthernetMac struct {
	// string is the MAC address itself.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	String string `json:"string,omitempty"`
	// fromHostInterface is the name of a NIC in the host's
	// status.hardware.nics.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	FromHostInterface string `json:"fromHostInterface,omitempty"`
	// fromAnnotation reads the MAC address from an annotation.
	// +optional
	FromAnnotation NetworkLinkEthernetMacFromAnnotation `json:"fromAnnotation,omitempty,omitzero"`
}

// NetworkDataLinkEthernet is an ethernet link.
type NetworkDataLinkEthernet struct {
	// type is the link's type.
	// +required
	// +kubebuilder:validation:Enum=bridge;dvs;hw_veb;hyperv;ovs;tap;vhostuser;vif;phy
	Type string `json:"type,omitempty"`
	// id names the link for the networks that use it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ID string `json:"id,omitempty"`
	// name is the interface name cloud-init gives the NIC (renaming the one
	// with macAddress, if given).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9._-]*$`
	// +optional
	Name string `json:"name,omitempty"`
	// mtu of the link.
	// +kubebuilder:default=1500
	// +kubebuilder:validation:Maximum=9000
	// +kubebuilder:validation:Minimum=1280
	// +optional
	MTU int32 `json:"mtu,omitempty"`
	// macAddress of the link.
	// +required
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`
}

// NetworkDataLinkBond is a bond of links.
type NetworkDataLinkBond struct {
	// bondMode is the bonding mode.
	// +required
	// +kubebuilder:validation:Enum="balance-rr";"active-backup";"balance-xor";"broadcast";"balance-tlb";"balance-alb";"802.3ad"
	BondMode string `json:"bondMode,omitempty"`
	// bondXmitHashPolicy is the transmit hash policy of the balance-xor and
	// 802.3ad modes.
	// +kubebuilder:validation:Enum="layer2";"layer3+4";"layer2+3"
	// +optional
	BondXmitHashPolicy string `json:"bondXmitHashPolicy,omitempty"`
	// id names the link for the networks that use it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ID string `json:"id,omitempty"`
	// name is the interface name cloud-init gives the bond.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9._-]*$`
	// +optional
	Name string `json:"name,omitempty"`
	// mtu of the link.
	// +kubebuilder:default=1500
	// +kubebuilder:validation:Maximum=9000
	// +kubebuilder:validation:Minimum=1280
	// +optional
	MTU int32 `json:"mtu,omitempty"`
	// macAddress of the bond.
	// +required
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`
	// parameters are further bond settings, passed on as is, one per name
	// (a map in v1beta1).
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	// +required
	Parameters []NetworkDataLinkBondParam `json:"parameters,omitempty"`
	// bondLinks are the ids of the bonded links.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=512
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	BondLinks []string `json:"bondLinks,omitempty"`
}

// NetworkDataLinkBondParam is one bond setting.
type NetworkDataLinkBondParam struct {
	// name of the setting.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Name string `json:"name,omitempty"`
	// value of the setting, any JSON value: a number (miimon: 100) as
	// well as an object. Upstream's schema says object, which refuses the
	// numbers its own conversion from v1beta1 writes.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// NetworkDataLinkVlan is a VLAN on a link.
type NetworkDataLinkVlan struct {
	// vlanID is the VLAN's tag.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4096
	// +required
	VlanID *int32 `json:"vlanID,omitempty"`
	// id names the link for the networks that use it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ID string `json:"id,omitempty"`
	// name is the interface name cloud-init gives the VLAN.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9._-]*$`
	// +optional
	Name string `json:"name,omitempty"`
	// mtu of the link.
	// +kubebuilder:default=1500
	// +kubebuilder:validation:Maximum=9000
	// +kubebuilder:validation:Minimum=1280
	// +optional
	MTU int32 `json:"mtu,omitempty"`
	// macAddress of the VLAN interface.
	// +required
	MACAddress *NetworkLinkEthernetMac `json:"macAddress,omitempty"`
	// vlanLink is the id of the link the VLAN is on.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	VlanLink string `json:"vlanLink,omitempty"`
}

// NetworkDataLink lists the links by type.
type NetworkDataLink struct {
	// ethernets are ethernet links, one per id.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Ethernets []NetworkDataLinkEthernet `json:"ethernets,omitempty"`
	// bonds are bonds of links, one per id.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	Bonds []NetworkDataLinkBond `json:"bonds,omitempty"`
	// vlans are VLANs on links, one per vlanID.
	// +optional
	// +listType=map
	// +listMapKey=vlanID
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	Vlans []NetworkDataLinkVlan `json:"vlans,omitempty"`
}

// NetworkDataService lists the DNS servers of the host.
type NetworkDataService struct {
	// dns are DNS server addresses.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	DNS []ipamv1.IPAddressStr `json:"dns,omitempty"`
	// dnsFromIPPool is a pool whose DNS servers are added.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	DNSFromIPPool string `json:"dnsFromIPPool,omitempty"`
}

// NetworkDataServicev4 lists the IPv4 DNS servers of a route.
type NetworkDataServicev4 struct {
	// dns are DNS server addresses.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	DNS []ipamv1.IPAddressv4Str `json:"dns,omitempty"`
	// dnsFromIPPool is a pool whose DNS servers are added.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	DNSFromIPPool string `json:"dnsFromIPPool,omitempty"`
}

// NetworkDataServicev6 lists the IPv6 DNS servers of a route.
type NetworkDataServicev6 struct {
	// dns are DNS server addresses.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	DNS []ipamv1.IPAddressv6Str `json:"dns,omitempty"`
	// dnsFromIPPool is a pool whose DNS servers are added.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	DNSFromIPPool string `json:"dnsFromIPPool,omitempty"`
}

// IPPoolReference names an IP pool in the Metal3Data's namespace.
type IPPoolReference struct {
	// name of the pool.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`
	// kind of the pool.
	// +optional
	// +kubebuilder:default=IPPool
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`
	Kind string `json:"kind,omitempty"`
	// apiGroup of the pool.
	// +optional
	// +kubebuilder:default=ipam.metal3.io
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	APIGroup string `json:"apiGroup,omitempty"`
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
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	FromIPPool string `json:"fromIPPool,omitempty"`
	// fromPoolRef is a pool whose gateway is used.
	// +optional
	FromPoolRef IPPoolReference `json:"fromPoolRef,omitempty,omitzero"`
	// fromPoolAnnotation names the pool through an annotation.
	// +optional
	FromPoolAnnotation FromPoolAnnotation `json:"fromPoolAnnotation,omitempty,omitzero"`
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
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	FromIPPool string `json:"fromIPPool,omitempty"`
	// fromPoolRef is a pool whose gateway is used.
	// +optional
	FromPoolRef IPPoolReference `json:"fromPoolRef,omitempty,omitzero"`
	// fromPoolAnnotation names the pool through an annotation.
	// +optional
	FromPoolAnnotation FromPoolAnnotation `json:"fromPoolAnnotation,omitempty,omitzero"`
}

// NetworkDataRoutev4 is an IPv4 route.
type NetworkDataRoutev4 struct {
	// network is the destination's network address.
	// +required
	Network ipamv1.IPAddressv4Str `json:"network,omitempty"`
	// prefix is the destination's prefix length.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +optional
	Prefix *int32 `json:"prefix,omitempty"`
	// gateway is the next hop.
	// +required
	Gateway NetworkGatewayv4 `json:"gateway,omitempty,omitzero"`
	// services are DNS servers reached through the route.
	// +optional
	Services *NetworkDataServicev4 `json:"services,omitempty"`
}

// NetworkDataRoutev6 is an IPv6 route.
type NetworkDataRoutev6 struct {
	// network is the destination's network address.
	// +required
	Network ipamv1.IPAddressv6Str `json:"network,omitempty"`
	// prefix is the destination's prefix length.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix *int32 `json:"prefix,omitempty"`
	// gateway is the next hop.
	// +required
	Gateway NetworkGatewayv6 `json:"gateway,omitempty,omitzero"`
	// services are DNS servers reached through the route.
	// +optional
	Services *NetworkDataServicev6 `json:"services,omitempty"`
}

// NetworkDataIPv4 is a static IPv4 network whose address comes from a
// pool; the first field set names the pool, in the order
// fromPoolAnnotation, fromPoolRef, ipAddressFromIPPool.
type NetworkDataIPv4 struct {
	// id names the network.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ID string `json:"id,omitempty"`
	// link is the id of the link the network is on.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Link string `json:"link,omitempty"`
	// ipAddressFromIPPool is the pool the address comes from.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	IPAddressFromIPPool string `json:"ipAddressFromIPPool,omitempty"`
	// fromPoolRef is the pool the address comes from.
	// +optional
	FromPoolRef IPPoolReference `json:"fromPoolRef,omitempty,omitzero"`
	// fromPoolAnnotation names the pool through an annotation.
	// +optional
	FromPoolAnnotation FromPoolAnnotation `json:"fromPoolAnnotation,omitempty,omitzero"`
	// routes of the network, one per destination network.
	// +optional
	// +listType=map
	// +listMapKey=network
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	Routes []NetworkDataRoutev4 `json:"routes,omitempty"`
}

// NetworkDataIPv6 is a static IPv6 network whose address comes from a
// pool; the first field set names the pool, in the order
// fromPoolAnnotation, fromPoolRef, ipAddressFromIPPool.
type NetworkDataIPv6 struct {
	// id names the network.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ID string `json:"id,omitempty"`
	// link is the id of the link the network is on.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Link string `json:"link,omitempty"`
	// ipAddressFromIPPool is the pool the address comes from.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	IPAddressFromIPPool string `json:"ipAddressFromIPPool,omitempty"`
	// fromPoolRef is the pool the address comes from.
	// +optional
	FromPoolRef IPPoolReference `json:"fromPoolRef,omitempty,omitzero"`
	// fromPoolAnnotation names the pool through an annotation.
	// +optional
	FromPoolAnnotation FromPoolAnnotation `json:"fromPoolAnnotation,omitempty,omitzero"`
	// routes of the network, one per destination network.
	// +optional
	// +listType=map
	// +listMapKey=network
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	Routes []NetworkDataRoutev6 `json:"routes,omitempty"`
}

// NetworkDataIPv4DHCP is an IPv4 network configured by DHCP.
type NetworkDataIPv4DHCP struct {
	// id names the network.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ID string `json:"id,omitempty"`
	// link is the id of the link the network is on.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Link string `json:"link,omitempty"`
	// routes of the network, one per destination network.
	// +optional
	// +listType=map
	// +listMapKey=network
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	Routes []NetworkDataRoutev4 `json:"routes,omitempty"`
}

// NetworkDataIPv6DHCP is an IPv6 network configured by DHCPv6 or SLAAC.
type NetworkDataIPv6DHCP struct {
	// id names the network.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ID string `json:"id,omitempty"`
	// link is the id of the link the network is on.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Link string `json:"link,omitempty"`
	// routes of the network, one per destination network.
	// +optional
	// +listType=map
	// +listMapKey=network
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	Routes []NetworkDataRoutev6 `json:"routes,omitempty"`
}

// NetworkDataNetwork lists the networks by type, one per id.
type NetworkDataNetwork struct {
	// ipv4 are static IPv4 networks.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	IPv4 []NetworkDataIPv4 `json:"ipv4,omitempty"`
	// ipv6 are static IPv6 networks.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	IPv6 []NetworkDataIPv6 `json:"ipv6,omitempty"`
	// ipv4DHCP are IPv4 networks configured by DHCP.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	IPv4DHCP []NetworkDataIPv4DHCP `json:"ipv4DHCP,omitempty"`
	// ipv6DHCP are IPv6 networks configured by DHCPv6.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	IPv6DHCP []NetworkDataIPv6DHCP `json:"ipv6DHCP,omitempty"`
	// ipv6SLAAC are IPv6 networks configured by SLAAC.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	IPv6SLAAC []NetworkDataIPv6DHCP `json:"ipv6SLAAC,omitempty"`
}

// NetworkData is the OpenStack network_data.json form of the host's
// network configuration.
type NetworkData struct {
	// links are the host's interfaces.
	// +optional
	Links *NetworkDataLink `json:"links,omitempty"`
	// networks are the addresses on the links.
	// +optional
	Networks *NetworkDataNetwork `json:"networks,omitempty"`
	// services are the host's DNS servers.
	// +optional
	Services *NetworkDataService `json:"services,omitempty"`
}

// Metal3DataTemplateSpec is what every Metal3Data rendered from the
// template holds.
type Metal3DataTemplateSpec struct {
	// clusterName is the Cluster API Cluster the template belongs to;
	// upstream deprecates it and reads it no more, v1beta1 requires it.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ClusterName string `json:"clusterName,omitempty"`
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
	// indexes are the index of each claim, one per index (a map from
	// claim name to index in v1beta1).
	// +optional
	// +listType=map
	// +listMapKey=index
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	Indexes []IndexEntry `json:"indexes,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3datatemplates,scope=Namespaced,categories=cluster-api,shortName=m3dt;m3datatemplate;m3datatemplates;metal3dt;metal3datatemplate
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster API Cluster the template belongs to"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Metal3DataTemplate renders, for each Metal3DataClaim that names it, a
// Metal3Data with its own index and the meta-data and network-data
// Secrets of one host.
type Metal3DataTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the template.
	// +optional
	Spec Metal3DataTemplateSpec `json:"spec,omitempty,omitzero"`
	// status records the indexes given.
	// +optional
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
