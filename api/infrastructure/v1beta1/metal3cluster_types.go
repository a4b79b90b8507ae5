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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterFinalizer holds a Metal3Cluster until its Metal3Machines are gone.
const ClusterFinalizer = "metal3cluster.infrastructure.cluster.x-k8s.io"

// Metal3Cluster condition reasons.
const (
	// ReadyReason: the endpoint is set and the owner Cluster known.
	ReadyReason = "Ready"
	// WaitingForClusterOwnerReason: no Cluster owns the Metal3Cluster yet.
	WaitingForClusterOwnerReason = "WaitingForClusterOwner"
	// InvalidSpecReason: the spec cannot work (for example no endpoint).
	InvalidSpecReason = "InvalidSpec"
	// DeletingReason: the object is being deleted.
	DeletingReason = "Deleting"
	// WaitingForMachinesDeletedReason: Metal3Machines of the cluster remain.
	WaitingForMachinesDeletedReason = "WaitingForMachinesDeleted"
)

// Metal3ClusterSpec is the bare-metal infrastructure of one Cluster API
// Cluster: where its control plane is reached.
type Metal3ClusterSpec struct {
	// controlPlaneEndpoint is the address of the cluster's API servers (a
	// load balancer or virtual IP in front of the control-plane hosts).
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty"`
	// apiEndpoint is the endpoint as an https URL (https://host:port), the
	// form of CAPM3's first API versions. When controlPlaneEndpoint is
	// empty, the provider fills it from this field.
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`
	// noCloudProvider true: no cloud provider runs in the workload cluster,
	// so the provider sets spec.providerID on its Nodes, found by the
	// metal3.io/uuid label. Deprecated upstream for cloudProviderEnabled;
	// when both are set, cloudProviderEnabled wins.
	// +optional
	NoCloudProvider *bool `json:"noCloudProvider,omitempty"`
	// cloudProviderEnabled false: the provider sets spec.providerID on the
	// workload cluster's Nodes (see noCloudProvider). True: something else
	// does, and the provider only reads it.
	// +optional
	CloudProviderEnabled *bool `json:"cloudProviderEnabled,omitempty"`
	// failureDomains are the failure domains Cluster API may spread
	// machines over, by name (upstream v1beta1's map; v1beta2 lists them).
	// +optional
	FailureDomains FailureDomains `json:"failureDomains,omitempty"`
}

// FailureDomains maps a failure domain's name to its description.
type FailureDomains map[string]FailureDomainSpec

// FailureDomainSpec describes one failure domain.
type FailureDomainSpec struct {
	// controlPlane true: control-plane machines may be placed here.
	// +optional
	ControlPlane bool `json:"controlPlane,omitempty"`
	// attributes are free-form properties of the domain.
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`
}

// SetsNodeProviderID reports whether the provider writes spec.providerID
// on the workload cluster's Nodes: cloudProviderEnabled false, or, when
// that is unset, noCloudProvider true.
func (s Metal3ClusterSpec) SetsNodeProviderID() bool {
	if s.CloudProviderEnabled != nil {
		return !*s.CloudProviderEnabled
	}
	return s.NoCloudProvider != nil && *s.NoCloudProvider
}

// Metal3ClusterStatus is the observed state of a Metal3Cluster.
type Metal3ClusterStatus struct {
	// ready is true once the infrastructure is ready for Cluster API (the
	// v1beta1 contract field; initialization.provisioned says the same).
	// +optional
	Ready bool `json:"ready"`
	// initialization.provisioned is what Cluster API reads under the
	// v1beta2 contract.
	// +optional
	Initialization InitializationStatus `json:"initialization,omitempty"`
	// apiEndpoints lists the endpoint in use, as CAPM3's first API
	// versions reported it.
	// +optional
	APIEndpoints []APIEndpoint `json:"apiEndpoints,omitempty"`
	// failureReason and failureMessage report a spec that cannot work.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// lastUpdated is when the status was last written.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`
	// conditions: Ready, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=metal3clusters,scope=Namespaced,categories=cluster-api,shortName=m3c;m3cluster;m3clusters;metal3c;metal3cluster
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster API Cluster it belongs to"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="Control-plane endpoint host"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.ready"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Metal3Cluster is the bare-metal infrastructure of a Cluster API Cluster.
type Metal3Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Metal3ClusterSpec   `json:"spec,omitempty"`
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
