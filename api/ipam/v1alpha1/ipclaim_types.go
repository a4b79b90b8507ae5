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

// IPClaimFinalizer keeps an IPClaim until its IPAddress is deleted and its
// address is back in the pool.
const IPClaimFinalizer = "ipclaim.ipam.metal3.io"

// IPAddressAnnotation on an IPClaim asks for that address of the pool.
const IPAddressAnnotation = "ipAddress"

// IPClaimSpec names the pool an address is wanted from.
type IPClaimSpec struct {
	// pool is the IPPool, in the claim's namespace.
	// +required
	Pool corev1.ObjectReference `json:"pool"`
}

// IPClaimStatus is the outcome of the claim.
type IPClaimStatus struct {
	// address is the IPAddress given to the claim.
	// +optional
	Address *corev1.ObjectReference `json:"address,omitempty"`
	// errorMessage says why no address was given yet, for example that the
	// pool is exhausted; the claim is served once an address is free.
	// +optional
	ErrorMessage *string `json:"errorMessage,omitempty"`
}

// IPClaim asks an IPPool for one address.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=ipclaims,scope=Namespaced,categories=cluster-api,shortName=ipc;ipclaim;m3ipc;m3ipclaim;m3ipclaims;metal3ipc;metal3ipclaim;metal3ipclaims
// +kubebuilder:printcolumn:name="Pool",type="string",JSONPath=".spec.pool.name"
// +kubebuilder:printcolumn:name="Address",type="string",JSONPath=".status.address.name"
// +kubebuilder:printcolumn:name="Error",type="string",JSONPath=".status.errorMessage",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type IPClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   IPClaimSpec   `json:"spec,omitempty"`
	Status IPClaimStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// IPClaimList is a list of IPClaims.
type IPClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPClaim `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &IPClaim{}, &IPClaimList{})
}
