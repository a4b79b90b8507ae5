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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
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

// Metal3Machine condition types; Ready summarizes them.
const (
	// AssociateBareMetalHostCondition: a host is claimed for the machine.
	AssociateBareMetalHostCondition = "AssociateBareMetalHost"
	// Metal3DataReadyCondition: the data template's Secrets are rendered.
	Metal3DataReadyCondition = "Metal3DataReady"
	// HostProvisionedCondition: the claimed host is provisioned.
	HostProvisionedCondition = "HostProvisioned"
)

// Metal3Machine condition reasons.
const (
	WaitingForMachineOwnerReason          = "WaitingForMetal3MachineOwnerRef"
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructureReady"
	WaitingForMetal3ClusterReason         = "WaitingforMetal3Cluster"
	WaitingForBootstrapDataReason         = "WaitingForBootstrapData"
	NoHostAvailableReason                 = "NoAvailableBareMetalHost"
	AssociateBareMetalHostSuccessReason   = "AssociateBareMetalHostSuccess"
	AssociateBareMetalHostFailedReason    = "AssociateBareMetalHostFailed"
	WaitingForMetal3DataReason            = "WaitingForMetal3Data"
	Metal3DataSecretsReadyReason          = "Metal3DataSecretsReady"
	NoDataTemplateReason                  = "NoDataTemplate"
	HostProvisioningReason                = "Provisioning"
	HostProvisionedReason                 = "Provisioned"
	HostErrorReason                       = "HostError"
	WaitingForNodeReason                  = "WaitingForNode"
	ProvisionedReason                     = "Provisioned"
	HostDeprovisioningReason              = "Deprovisioning"
	HostLostReason                        = "HostLost"
	MachineDeletingReason                 = "Deleting"
)

// Values of status.phase, as CAPM3 reports them.
const (
	PhasePending      = "Pending"
	PhaseAssociating  = "Associating"
	PhaseProvisioning = "Provisioning"
	PhaseProvisioned  = "Provisioned"
	PhaseDeleting     = "Deleting"
	PhaseFailed       = "Failed"
)

// Metal3MachineSpec says what a Cluster API Machine asks of bare metal:
// which hosts may serve it and what to write to the chosen one.
type Metal3MachineSpec struct {
	// providerID is set by the provider once the host is provisioned:
	// metal3://<BareMetalHost uid>. The later upstream form
	// metal3://<namespace>/<host>/<machine> is accepted on existing objects.
	// +optional
	ProviderID *string `json:"providerID,omitempty"`
	// image is written to the host; either image or customDeploy.
	// +optional
	Image Image `json:"image,omitempty"`
	// customDeploy replaces the image with a deploy ramdisk procedure.
	// +optional
	CustomDeploy *CustomDeploy `json:"customDeploy,omitempty"`
	// userData is a Secret (key value or userData) handed to the host as
	// user-data; the Machine's bootstrap data Secret when unset. The
	// namespace defaults to the Metal3Machine's.
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`
	// hostSelector narrows the hosts the machine may claim.
	// +optional
	HostSelector HostSelector `json:"hostSelector,omitempty"`
	// dataTemplate is a Metal3DataTemplate whose rendering gives the host
	// its meta-data and network-data; it wins over metaData and networkData.
	// +optional
	DataTemplate *corev1.ObjectReference `json:"dataTemplate,omitempty"`
	// metaData is a Secret of meta-data given as is.
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`
	// networkData is a Secret of network-data given as is.
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`
	// automatedCleaningMode is copied to the host: metadata cleans its
	// disks on deprovisioning, disabled does not.
	// +kubebuilder:validation:Enum=metadata;disabled
	// +optional
	AutomatedCleaningMode *string `json:"automatedCleaningMode,omitempty"`
	// failureDomain the machine should be in, as Cluster API names it.
	// +optional
	FailureDomain string `json:"failureDomain,omitempty"`
}

// Metal3MachineStatus is the observed state of a Metal3Machine.
type Metal3MachineStatus struct {
	// ready is true once the host is provisioned (the v1beta1 contract
	// field; initialization.provisioned says the same).
	// +optional
	Ready bool `json:"ready"`
	// initialization.provisioned is what Cluster API reads under the
	// v1beta2 contract.
	// +optional
	Initialization InitializationStatus `json:"initialization,omitempty"`
	// addresses of the host: its NICs' IPs and its hostname; Cluster API
	// copies them to the Machine.
	// +optional
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`
	// phase is a one-word summary: Pending, Associating, Provisioning,
	// Provisioned, Deleting or Failed.
	// +optional
	Phase string `json:"phase,omitempty"`
	// failureReason and failureMessage report an error that needs a change
	// of spec or host.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// userData, metaData and networkData are the Secrets given to the host.
	// +optional
	UserData *corev1.SecretReference `json:"userData,omitempty"`
	// +optional
	MetaData *corev1.SecretReference `json:"metaData,omitempty"`
	// +optional
	NetworkData *corev1.SecretReference `json:"networkData,omitempty"`
	// renderedData is the Metal3Data rendered for this machine.
	// +optional
	RenderedData *corev1.ObjectReference `json:"renderedData,omitempty"`
	// lastUpdated is when the status was last written.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
	// conditions: Ready, AssociateBareMetalHost, Metal3DataReady,
	// HostProvisioned, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=metal3machines,scope=Namespaced,categories=cluster-api,shortName=m3m;m3machine;m3machines;metal3m;metal3machine
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster API Cluster it belongs to"
// +kubebuilder:printcolumn:name="Host",type="string",JSONPath=".metadata.annotations.metal3\\.io/BareMetalHost",description="BareMetalHost claimed"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.ready"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Metal3Machine is the bare-metal infrastructure of a Cluster API Machine:
// the BareMetalHost it claims and provisions.
type Metal3Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Metal3MachineSpec   `json:"spec,omitempty"`
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
