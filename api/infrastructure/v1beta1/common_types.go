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
	"k8s.io/apimachinery/pkg/selection"
)

// Annotations and labels the provider reads or writes, upstream's names.
const (
	// HostAnnotation on a Metal3Machine names its BareMetalHost as
	// "<namespace>/<name>".
	HostAnnotation = "metal3.io/BareMetalHost"
	// UUIDLabel on a workload cluster Node carries the BareMetalHost's UID
	// (kubelet's node-labels, from the meta-data's uuid); the provider finds
	// the Node by it to set spec.providerID.
	UUIDLabel = "metal3.io/uuid"
	// ProviderIDPrefix starts every providerID the provider writes.
	ProviderIDPrefix = "metal3://"
	// UnhealthyAnnotation on a BareMetalHost says remediation gave up on
	// it: no machine claims it until someone removes the annotation.
	// UnhealthyAnnotationDeprecated is its former name, still honoured.
	UnhealthyAnnotation           = "capm3.metal3.io/unhealthy"
	UnhealthyAnnotationDeprecated = "capi.metal3.io/unhealthy"
	// LiveISODiskFormat is the image format that boots without a checksum.
	LiveISODiskFormat = "live-iso"
	// ContractLabel is the Cluster API contract label on this group's CRDs:
	// the kinds follow the v1beta2 contract, served as v1beta1.
	ContractLabel = "cluster.x-k8s.io/v1beta2"
)

// Condition types and reasons common to the kinds of this group.
const (
	// ReadyCondition summarizes an object's state.
	ReadyCondition = "Ready"
	// PausedCondition is True while the object or its Cluster is paused.
	PausedCondition = "Paused"
)

// APIEndpoint is an address where a Kubernetes API server is reachable.
type APIEndpoint struct {
	// host is the hostname or IP address of the API server.
	// +required
	Host string `json:"host"`
	// port is the TCP port of the API server.
	// +required
	Port int `json:"port"`
}

// IsZero reports whether neither host nor port is set.
func (e APIEndpoint) IsZero() bool { return e.Host == "" && e.Port == 0 }

// HostSelector narrows the BareMetalHosts a Metal3Machine may claim, by
// their labels.
type HostSelector struct {
	// matchLabels must all be present on a chosen host, with these values.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// matchExpressions must all hold for a chosen host's labels.
	// +optional
	MatchExpressions []HostSelectorRequirement `json:"matchExpressions,omitempty"`
}

// HostSelectorRequirement is one label expression: key, operator and values.
type HostSelectorRequirement struct {
	// key is the label name.
	// +required
	Key string `json:"key"`
	// operator is one of the label selection operators: in, notin, =, ==,
	// !=, exists, !, gt, lt.
	// +required
	Operator selection.Operator `json:"operator"`
	// values the operator compares with; empty for exists and !.
	// +optional
	Values []string `json:"values"`
}

// Image is the operating system image written to a host.
type Image struct {
	// url is where the image is downloaded from.
	// +required
	URL string `json:"url"`
	// checksum is the image's md5, sha256 or sha512 sum, or a URL that serves
	// it. Required unless format is live-iso.
	// +optional
	Checksum string `json:"checksum,omitempty"`
	// checksumType is the checksum's algorithm.
	// +kubebuilder:validation:Enum=md5;sha256;sha512
	// +optional
	ChecksumType *string `json:"checksumType,omitempty"`
	// format is the image's disk format.
	// +kubebuilder:validation:Enum=raw;qcow2;vdi;vmdk;live-iso
	// +optional
	DiskFormat *string `json:"format,omitempty"`
}

// CustomDeploy names a deployment procedure of the deploy ramdisk, in
// place of an image.
type CustomDeploy struct {
	// method is the custom deploy step's name.
	// +required
	Method string `json:"method"`
}

// ObjectMeta is the metadata a template gives the objects made from it.
type ObjectMeta struct {
	// labels added to the objects made from the template.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// annotations added to the objects made from the template.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// InitializationStatus is what Cluster API reads from an infrastructure
// object under the v1beta2 contract.
type InitializationStatus struct {
	// provisioned is true once the infrastructure is ready for Cluster API.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}
