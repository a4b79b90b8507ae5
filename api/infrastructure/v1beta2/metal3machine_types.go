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
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capierrors "sigs.k8s.io/cluster-api/api/deprecated/errors" //nolint:staticcheck // upstream v1beta2's failureReason types, for v1beta1 readers
)

// MachineFinalizer holds a Metal3Machine until its host is released.
const MachineFinalizer = "metal3machine.infrastructure.cluster.x-k8s.io"

// Values of spec.automatedCleaningMode.
const (
	CleaningModeDisabled = "disabled"
	CleaningModeMetadata = "metadata"
)

// ClonedFromGroupKind is the value of Cluster API's cloned-from annotation
// on a Metal3Machine made from a Metal3MachineTemplate.
const ClonedFromGroupKind = "Metal3MachineTemplate.infrastructure.cluster.x-k8s.io"

// Metal3MachineSpec says what a Cluster API Machine asks of bare metal:
// which hosts may serve it and what to write to the chosen one. It holds
// either image or customDeploy.
type Metal3MachineSpec struct {
	// providerID is the Node's spec.providerID for this machine, set once
	// the host is provisioned: metal3://<namespace>/<host>/<machine>, or the
	// older metal3://<BareMetalHost uid>.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// image is written to the host.
	// +optional
	Image Image `json:"image,omitempty,omitzero"`

	// customDeploy replaces the image with a deploy ramdisk procedure.
	// +optional
	CustomDeploy CustomDeploy `json:"customDeploy,omitempty,omitzero"`

	// userData is a Secret handed to the host as user-data; the Machine's
	// bootstrap data Secret when unset. The namespace defaults to the
	// Metal3Machine's.
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`

	// hostSelector narrows the hosts the machine may claim.
	// +optional
	HostSelector *HostSelector `json:"hostSelector,omitempty"`

	// dataTemplate is a Metal3DataTemplate whose rendering gives the host
	// its meta-data and network-data; its keys win over metaData's.
	// +optional
	DataTemplate *Metal3ObjectRef `json:"dataTemplate,omitempty"`

	// metaData is a Secret of meta-data given as is.
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`

	// networkData is a Secret of network-data given as is.
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`

	// automatedCleaningMode is copied to the host: metadata cleans its
	// disks on provisioning and deprovisioning, disabled does not.
	// +kubebuilder:validation:Enum:=metadata;disabled
	// +optional
	AutomatedCleaningMode string `json:"automatedCleaningMode,omitempty,omitzero"`

	// failureDomain the machine should be in, as Cluster API names it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`
}

// Metal3MachineStatus is the observed state of a Metal3Machine.
type Metal3MachineStatus struct {
	// conditions: Ready, AssociateBareMetalHost,
	// AssociateMetal3MachineMetaData, Metal3DataReady, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// lastUpdated is when the status was last written.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// addresses of the host: its NICs' IPs and its hostname; Cluster API
	// copies them to the Machine.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// initialization is what Cluster API reads to know the machine's
	// infrastructure is provisioned (the v1beta2 contract).
	// +optional
	Initialization Metal3MachineInitializationStatus `json:"initialization,omitempty,omitzero"`

	// userData is the Secret given to the host as user-data.
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`

	// renderedData is the Metal3Data rendered for this machine.
	// +optional
	RenderedData *Metal3ObjectRef `json:"renderedData,omitempty"`

	// metaData is the Secret given to the host as meta-data.
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`

	// networkData is the Secret given to the host as network-data.
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`

	// deprecated holds the v1beta1 status fields still reported.
	// +optional
	Deprecated *Metal3MachineDeprecatedStatus `json:"deprecated,omitempty"`
}

// Metal3MachineInitializationStatus says whether the machine's
// infrastructure is provisioned.
// +kubebuilder:validation:MinProperties=1
type Metal3MachineInitializationStatus struct {
	// provisioned is true once the host is provisioned.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// Metal3MachineDeprecatedStatus groups status fields kept for older
// readers.
type Metal3MachineDeprecatedStatus struct {
	// v1beta1 holds the fields only v1beta1 readers use; they go when
	// v1beta1 does.
	// +optional
	V1Beta1 *Metal3MachineV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// Metal3MachineV1Beta1DeprecatedStatus are v1beta1's conditions and failure
// fields, kept for v1beta1 readers; status.conditions replaces them.
type Metal3MachineV1Beta1DeprecatedStatus struct {
	// conditions in Cluster API's v1beta1 form.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"` //nolint:staticcheck // upstream v1beta2's type, for v1beta1 readers

	// failureReason is a machine-readable token of an error that needs a
	// change of spec or host.
	// +optional
	FailureReason *capierrors.MachineStatusError `json:"failureReason,omitempty"`

	// failureMessage is the same error in words.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3machines,scope=Namespaced,categories=cluster-api,shortName=m3m;m3machine;m3machines;metal3m;metal3machine
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster API Cluster it belongs to"
// +kubebuilder:printcolumn:name="Host",type="string",JSONPath=".metadata.annotations.metal3\\.io/BareMetalHost",description="BareMetalHost claimed"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID"
// +kubebuilder:printcolumn:name="Provisioned",type="string",JSONPath=".status.initialization.provisioned"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Metal3Machine is the bare-metal infrastructure of a Cluster API Machine:
// the BareMetalHost it claims and provisions.
type Metal3Machine struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired machine.
	// +optional
	Spec Metal3MachineSpec `json:"spec,omitempty"`
	// status is the observed machine.
	// +optional
	Status Metal3MachineStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// Metal3MachineList is a list of Metal3Machines.
type Metal3MachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Machine `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3Machine{}, &Metal3MachineList{})
}
