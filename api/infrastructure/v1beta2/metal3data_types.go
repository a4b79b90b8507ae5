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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataFinalizer keeps a Metal3Data until its IPClaims are released.
const DataFinalizer = "metal3data.infrastructure.cluster.x-k8s.io"

// Keys of the rendered Secrets, and the Secrets' type, as upstream.
const (
	MetaDataSecretKey    = "metaData"
	NetworkDataSecretKey = "networkData"
	DataSecretType       = corev1.SecretType("infrastructure.cluster.x-k8s.io/secret")
)

// Metal3DataSpec is one rendering of a Metal3DataTemplate for one claim.
type Metal3DataSpec struct {
	// index of this rendering among the template's; it is also the suffix
	// of the Metal3Data's name.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Index *int32 `json:"index,omitempty"`

	// metaData is the rendered meta-data Secret.
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`

	// networkData is the rendered network-data Secret.
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`

	// claim is the Metal3DataClaim this rendering is for.
	// +optional
	Claim *Metal3ObjectRef `json:"claim,omitempty"`

	// template is the Metal3DataTemplate rendered.
	// +optional
	Template *Metal3ObjectRef `json:"template,omitempty"`
}

// Metal3DataStatus says whether the Secrets are rendered.
type Metal3DataStatus struct {
	// ready is true once both Secrets exist.
	// +optional
	Ready *bool `json:"ready,omitempty"`

	// errorMessage says what keeps the Secrets from being rendered.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3datas,scope=Namespaced,categories=cluster-api,shortName=m3d;m3data;m3datas;metal3d;metal3data
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready"
// +kubebuilder:printcolumn:name="Index",type="integer",JSONPath=".spec.index"
// +kubebuilder:printcolumn:name="Claim",type="string",JSONPath=".spec.claim.name"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Metal3Data is the rendering of a Metal3DataTemplate for one
// Metal3DataClaim: an index and the meta-data and network-data Secrets of
// the claim's host.
type Metal3Data struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the rendering.
	// +optional
	Spec Metal3DataSpec `json:"spec,omitempty,omitzero"`
	// status says whether it is done.
	// +optional
	Status Metal3DataStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// Metal3DataList is a list of Metal3Datas.
type Metal3DataList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Data `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3Data{}, &Metal3DataList{})
}
