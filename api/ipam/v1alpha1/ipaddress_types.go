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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IPAddressFinalizer keeps an IPAddress until the pool has released it.
const IPAddressFinalizer = "ipaddress.ipam.metal3.io"

// IPAddressSpec is one address given to one claim.
type IPAddressSpec struct {
	// claim is the IPClaim the address was given to.
	// +required
	Claim corev1.ObjectReference `json:"claim"`
	// pool is the IPPool the address comes from.
	// +required
	Pool corev1.ObjectReference `json:"pool"`
	// prefix is the prefix length of the address's network.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix int `json:"prefix,omitempty"`
	// gateway is the gateway of the address's network.
	// +optional
	Gateway *IPAddressStr `json:"gateway,omitempty"`
	// address is the address.
	// +required
	Address IPAddressStr `json:"address"`
	// dnsServers are the DNS servers of the address's network.
	// +optional
	DNSServers []IPAddressStr `json:"dnsServers,omitempty"`
}

// IPAddress is an address an IPPool gave to an IPClaim. It has no status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ipaddresses,scope=Namespaced,categories=metal3,shortName=ipa;ipaddress;m3ipa;m3ipaddress;m3ipaddresses;metal3ipa;metal3ipaddress;metal3ipaddresses
// +kubebuilder:printcolumn:name="Address",type="string",JSONPath=".spec.address"
// +kubebuilder:printcolumn:name="Pool",type="string",JSONPath=".spec.pool.name"
// +kubebuilder:printcolumn:name="Claim",type="string",JSONPath=".spec.claim.name"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type IPAddress struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec IPAddressSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// IPAddressList is a list of IPAddresses.
type IPAddressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPAddress `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &IPAddress{}, &IPAddressList{})
}
