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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataClaimFinalizer keeps a Metal3DataClaim until its Metal3Data is
// deleted.
const DataClaimFinalizer = "metal3dataclaim.infrastructure.cluster.x-k8s.io"

// Metal3DataClaimSpec names the template to render.
type Metal3DataClaimSpec struct {
	// template is the Metal3DataTemplate; its namespace defaults to the
	// claim's.
	// +optional
	Template *Metal3ObjectRef `json:"template,omitempty"`
}

// Metal3DataClaimStatus is the outcome of the claim.
type Metal3DataClaimStatus struct {
	// renderedData is the Metal3Data created for the claim.
	// +optional
	RenderedData *Metal3ObjectRef `json:"renderedData,omitempty"`

	// errorMessage says why no Metal3Data was created.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3dataclaims,scope=Namespaced,categories=cluster-api,shortName=m3dc;m3dataclaim;m3dataclaims;metal3dc;metal3dataclaim
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Template",type="string",JSONPath=".spec.template.name"
// +kubebuilder:printcolumn:name="Data",type="string",JSONPath=".status.renderedData.name"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Metal3DataClaim asks a Metal3DataTemplate for a Metal3Data.
type Metal3DataClaim struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the template.
	// +optional
	Spec Metal3DataClaimSpec `json:"spec,omitempty"`
	// status is the outcome.
	// +optional
	Status Metal3DataClaimStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// Metal3DataClaimList is a list of Metal3DataClaims.
type Metal3DataClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3DataClaim `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3DataClaim{}, &Metal3DataClaimList{})
}
