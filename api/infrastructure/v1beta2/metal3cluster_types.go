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
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capierrors "sigs.k8s.io/cluster-api/api/deprecated/errors" //nolint:staticcheck // upstream v1beta2's failureReason types, for v1beta1 readers
)

// ClusterFinalizer holds a Metal3Cluster until its Metal3Machines are gone.
const ClusterFinalizer = "metal3cluster.infrastructure.cluster.x-k8s.io"

// Metal3ClusterSpec is the bare-metal infrastructure of one Cluster API
// Cluster: where its control plane is reached and its failure domains.
type Metal3ClusterSpec struct {
	// controlPlaneEndpoint is the address of the cluster's API servers (a
	// load balancer or virtual IP in front of the control-plane hosts).
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// cloudProviderEnabled false: the provider sets spec.providerID on the
	// workload cluster's Nodes, found by their metal3.io/uuid label. True:
	// something else (a cloud provider) does, and the provider reads it.
	// It replaces v1beta1's noCloudProvider, with the opposite sense.
	// +optional
	CloudProviderEnabled *bool `json:"cloudProviderEnabled,omitempty"`

	// failureDomains are the failure domains Cluster API may spread
	// machines over, one per name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`
}

// SetsNodeProviderID reports whether the provider writes spec.providerID on
// the workload cluster's Nodes: unless cloudProviderEnabled is true.
func (s Metal3ClusterSpec) SetsNodeProviderID() bool {
	return s.CloudProviderEnabled == nil || !*s.CloudProviderEnabled
}

// Metal3ClusterStatus is the observed state of a Metal3Cluster.
type Metal3ClusterStatus struct {
	// conditions: Ready, Paused, BaremetalInfrastructureReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// lastUpdated is when the status was last written.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// initialization is what Cluster API reads to know the infrastructure
	// is provisioned (the v1beta2 contract).
	// +optional
	Initialization Metal3ClusterInitializationStatus `json:"initialization,omitempty,omitzero"`

	// deprecated holds the v1beta1 status fields still reported.
	// +optional
	Deprecated *Metal3ClusterDeprecatedStatus `json:"deprecated,omitempty"`

	// failureDomains are the failure domains the provider reports to
	// Cluster API.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`
}

// Metal3ClusterInitializationStatus says whether the cluster's
// infrastructure is provisioned.
// +kubebuilder:validation:MinProperties=1
type Metal3ClusterInitializationStatus struct {
	// provisioned is true once the infrastructure is ready for Cluster API.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// Metal3ClusterDeprecatedStatus groups status fields kept for older
// readers.
type Metal3ClusterDeprecatedStatus struct {
	// v1beta1 holds the fields only v1beta1 readers use; they go when
	// v1beta1 does.
	// +optional
	V1Beta1 *Metal3ClusterV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// Metal3ClusterV1Beta1DeprecatedStatus are v1beta1's conditions and failure
// fields, kept for v1beta1 readers; status.conditions replaces them.
type Metal3ClusterV1Beta1DeprecatedStatus struct {
	// conditions in Cluster API's v1beta1 form.
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"` //nolint:staticcheck // upstream v1beta2's type, for v1beta1 readers

	// failureReason is a machine-readable token of a problem that needs a
	// change of spec.
	// +optional
	FailureReason *capierrors.ClusterStatusError `json:"failureReason,omitempty"`

	// failureMessage is the same problem in words.
	// +optional
	// +kubebuilder:validation:MinLength=0
	// +kubebuilder:validation:MaxLength=1024
	FailureMessage *string `json:"failureMessage,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3clusters,scope=Namespaced,categories=cluster-api,shortName=m3c;m3cluster;m3clusters;metal3c;metal3cluster
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster API Cluster it belongs to"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="Control-plane endpoint host"
// +kubebuilder:printcolumn:name="Provisioned",type="string",JSONPath=".status.initialization.provisioned"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Metal3Cluster is the bare-metal infrastructure of a Cluster API Cluster.
type Metal3Cluster struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired infrastructure.
	// +optional
	Spec Metal3ClusterSpec `json:"spec,omitempty"`
	// status is the observed infrastructure.
	// +optional
	Status Metal3ClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// Metal3ClusterList is a list of Metal3Clusters.
type Metal3ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Cluster `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3Cluster{}, &Metal3ClusterList{})
}
