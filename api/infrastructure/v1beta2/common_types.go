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
	"k8s.io/apimachinery/pkg/selection"
)

// Annotations and values the provider reads or writes, upstream's names.
const (
	// HostAnnotation on a Metal3Machine names its BareMetalHost as
	// "<namespace>/<name>".
	HostAnnotation = "metal3.io/BareMetalHost"
	// UUIDLabel on a workload cluster Node carries the BareMetalHost's UID;
	// the provider finds the Node by it to set spec.providerID.
	UUIDLabel = "metal3.io/uuid"
	// ProviderIDPrefix starts every providerID the provider writes.
	ProviderIDPrefix = "metal3://"
	// ContractLabel is the Cluster API contract label on this group's CRDs.
	ContractLabel = "cluster.x-k8s.io/v1beta2"
	// UnhealthyAnnotation on a BareMetalHost keeps the provider from
	// choosing it.
	UnhealthyAnnotation = "capm3.metal3.io/unhealthy"
	// UnhealthyAnnotationDeprecated is the former name of
	// UnhealthyAnnotation, still honoured.
	UnhealthyAnnotationDeprecated = "capi.metal3.io/unhealthy"
	// LiveISODiskFormat is the image format that boots without a checksum.
	LiveISODiskFormat = "live-iso"
)

// APIEndpoint is an address where a Kubernetes API server is reachable.
// +kubebuilder:validation:MinProperties=1
type APIEndpoint struct {
	// host is the hostname or IP address of the API server.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Host string `json:"host,omitempty"`

	// port is the TCP port of the API server.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// IsZero reports whether neither host nor port is set.
func (e APIEndpoint) IsZero() bool { return e.Host == "" && e.Port == 0 }

// HostSelector narrows the BareMetalHosts a Metal3Machine may claim, by
// their labels.
type HostSelector struct {
	// matchLabels must all be present on a chosen host, with these values.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`

	// matchExpressions must all hold for a chosen host's labels; one per
	// label key.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=512
	MatchExpressions []HostSelectorRequirement `json:"matchExpressions,omitempty"`
}

// HostSelectorRequirement is one label expression: key, operator and values.
type HostSelectorRequirement struct {
	// key is the label name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Key string `json:"key,omitempty"`

	// operator is one of the label selection operators: in, notin, =, ==,
	// !=, exists, !, gt, lt.
	// +required
	Operator selection.Operator `json:"operator,omitempty"`

	// values the operator compares with; empty for exists and !.
	// +required
	// +listType=set
	// +kubebuilder:validation:MaxItems=512
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	Values []string `json:"values,omitempty"`
}

// Image is the operating system image written to a host.
type Image struct {
	// url is where the image is downloaded from.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Format=uri
	URL string `json:"url,omitempty"`

	// checksum is the image's md5, sha256 or sha512 sum, or a URL that serves
	// it. Not needed for live-iso images and oci:// URLs.
	// +optional
	// +kubebuilder:validation:MinLength=0
	// +kubebuilder:validation:MaxLength=512
	Checksum *string `json:"checksum,omitempty"`

	// checksumType is the checksum's algorithm.
	// +kubebuilder:validation:Enum=md5;sha256;sha512
	// +optional
	ChecksumType string `json:"checksumType,omitempty"`

	// diskFormat is the image's disk format (format in v1beta1).
	// +kubebuilder:validation:Enum=raw;qcow2;vdi;vmdk;live-iso
	// +optional
	DiskFormat string `json:"diskFormat,omitempty"`
}

// CustomDeploy names a deployment procedure of the deploy ramdisk, in
// place of an image.
type CustomDeploy struct {
	// method is the custom deploy step's name, as the deploy ramdisk knows
	// it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Method string `json:"method,omitempty"`
}

// Metal3ObjectRef names an object of this group (or a Secret) by name and
// namespace; the kind is implied by the field that holds it.
// +structType=atomic
type Metal3ObjectRef struct {
	// name of the object.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// namespace of the object; the referrer's namespace when empty.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Namespace string `json:"namespace,omitempty"`
}
