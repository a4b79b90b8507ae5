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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IPPoolFinalizer keeps an IPPool until none of its addresses is allocated.
const IPPoolFinalizer = "ippool.ipam.metal3.io"

// AllocationStrategy says how an address is picked within one range of a
// pool. Ranges are always used in order: a range is full before the next
// one gives an address.
type AllocationStrategy string

// The allocation strategies.
const (
	// AllocationStrategySequential gives the lowest free address.
	AllocationStrategySequential AllocationStrategy = "sequential"
	// AllocationStrategyRandom gives a free address at random.
	AllocationStrategyRandom AllocationStrategy = "random"
)

// Pool is one range of addresses of an IPPool.
type Pool struct {
	// start is the first address of the range. Without it the range starts
	// at the subnet's first address after the network address.
	// +optional
	Start *IPAddressStr `json:"start,omitempty"`
	// end is the last address of the range, included.
	// +optional
	End *IPAddressStr `json:"end,omitempty"`
	// subnet bounds the range: an address outside it is never given.
	// +optional
	Subnet *IPSubnetStr `json:"subnet,omitempty"`
	// prefix is the prefix length given with addresses of this range,
	// instead of the pool's.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix int `json:"prefix,omitempty"`
	// gateway is the gateway given with addresses of this range, instead of
	// the pool's.
	// +optional
	Gateway *IPAddressStr `json:"gateway,omitempty"`
	// dnsServers are the DNS servers given with addresses of this range,
	// instead of the pool's.
	// +optional
	DNSServers []IPAddressStr `json:"dnsServers,omitempty"`
}

// IPPoolSpec is the set of addresses a pool gives out.
type IPPoolSpec struct {
	// clusterName is the Cluster API Cluster the pool belongs to; its
	// pausing pauses the pool.
	// +optional
	ClusterName *string `json:"clusterName,omitempty"`
	// pools are the ranges addresses are taken from, in order.
	// +optional
	Pools []Pool `json:"pools,omitempty"`
	// allocationStrategy picks the address within a range.
	// +kubebuilder:default=sequential
	// +kubebuilder:validation:Enum=sequential;random
	// +optional
	AllocationStrategy AllocationStrategy `json:"allocationStrategy,omitempty"`
	// preAllocations reserve an address for the IPClaim of that name. The
	// address must lie in one of the ranges.
	// +optional
	PreAllocations map[string]IPAddressStr `json:"preAllocations,omitempty"`
	// prefix is the prefix length given with every address, unless its
	// range has its own.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix int `json:"prefix,omitempty"`
	// gateway is the gateway given with every address, unless its range
	// has its own.
	// +optional
	Gateway *IPAddressStr `json:"gateway,omitempty"`
	// dnsServers are given with every address, unless its range has its own.
	// +optional
	DNSServers []IPAddressStr `json:"dnsServers,omitempty"`
	// namePrefix starts the name of every IPAddress of the pool:
	// <namePrefix>-<address with dots and colons as dashes>. The pool's
	// name when empty (upstream requires it).
	// +kubebuilder:validation:MaxLength=200
	// +optional
	NamePrefix string `json:"namePrefix,omitempty"`
}

// IPPoolStatus is the pool's record of what it gave out.
type IPPoolStatus struct {
	// lastUpdated is when the allocations last changed.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
	// indexes maps the name of each IPClaim served to its address. It is
	// the record allocations are made against: it is written, with
	// optimistic concurrency, before the IPAddress is created, so two
	// claims never get one address.
	// +optional
	Allocations map[string]IPAddressStr `json:"indexes,omitempty"`
}

// IPPool is a set of address ranges IPClaims are served from.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=ippools,scope=Namespaced,categories=cluster-api,shortName=ipp;ippool;m3ipp;m3ippool;m3ippools;metal3ipp;metal3ippool;metal3ippools
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster API Cluster the pool belongs to"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type IPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   IPPoolSpec   `json:"spec,omitempty"`
	Status IPPoolStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// IPPoolList is a list of IPPools.
type IPPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPPool `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &IPPool{}, &IPPoolList{})
}
