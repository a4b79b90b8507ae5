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

// +kubebuilder:object:root=true

// GenericContainer is the executor that runs an image over the phase's
// documents: a KRM function (type krm) or a container that reads them on
// its standard input (type airship). Built-in functions and Airship's
// toolbox images run without a container runtime (docs/phases.md).
type GenericContainer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec says what to run and how.
	// +optional
	Spec GenericContainerSpec `json:"spec,omitempty"`
	// config is the function's configuration (functionConfig) as a YAML
	// document, e.g. a ConfigMap with a script key for a toolbox image.
	// Ignored when configRef is set.
	// +optional
	Config string `json:"config,omitempty"`
	// configRef names a document of the phase bundle used as config.
	// +optional
	ConfigRef *corev1.ObjectReference `json:"configRef,omitempty"`
}

// GenericContainerType says who runs the image.
// +kubebuilder:validation:Enum=airship;krm
type GenericContainerType string

// Generic container types.
const (
	// GenericContainerTypeAirship runs the image as a container that reads
	// a ResourceList on its standard input (the default).
	GenericContainerTypeAirship GenericContainerType = "airship"
	// GenericContainerTypeKrm runs the image as a KRM function.
	GenericContainerTypeKrm GenericContainerType = "krm"
)

// GenericContainerSpec configures the container.
type GenericContainerSpec struct {
	// type is airship (the default) or krm.
	// +optional
	Type GenericContainerType `json:"type,omitempty"`
	// airship holds settings of the airship type.
	// +optional
	Airship AirshipContainerSpec `json:"airship,omitempty"`
	// krm holds settings of the krm type (none yet).
	// +optional
	KRM KRMContainerSpec `json:"krm,omitempty"`
	// sinkOutputDir, relative to the site directory (the target path and
	// the manifest's docEntryPointPrefix), receives the output documents;
	// without it they are printed.
	// +optional
	SinkOutputDir string `json:"sinkOutputDir,omitempty"`
	// hostNetwork runs the container in the host's network.
	// +optional
	HostNetwork bool `json:"hostNetwork,omitempty"`
	// image is the container image to run.
	// +required
	Image string `json:"image,omitempty"`
	// envVars are NAME=value pairs, or a NAME whose value is taken from
	// the environment airshipctl runs in.
	// +optional
	EnvVars []string `json:"envVars,omitempty"`
	// mounts are host paths mounted into the container.
	// +optional
	StorageMounts []StorageMount `json:"mounts,omitempty"`
	// timeout in seconds; 0 means none.
	// +optional
	Timeout uint64 `json:"timeout,omitempty"`
}

// AirshipContainerSpec holds settings of the airship type.
type AirshipContainerSpec struct {
	// containerRuntime is docker or podman; empty means whichever is found.
	// +optional
	ContainerRuntime string `json:"containerRuntime,omitempty"`
	// cmd replaces the image's command.
	// +optional
	Cmd []string `json:"cmd,omitempty"`
	// privileged runs the container privileged.
	// +optional
	Privileged bool `json:"privileged,omitempty"`
}

// KRMContainerSpec holds settings of the krm type; it has none yet.
type KRMContainerSpec struct{}

// StorageMount is a host path mounted into the container.
type StorageMount struct {
	// type of the mount, e.g. bind.
	// +optional
	MountType string `json:"type,omitempty"`
	// src is the host path: ~ is the home directory, and a relative path is
	// relative to the site's target path.
	// +optional
	Src string `json:"src,omitempty"`
	// dst is the path inside the container.
	// +optional
	DstPath string `json:"dst,omitempty"`
	// rw mounts read-write; mounts are read-only otherwise.
	// +optional
	ReadWriteMode bool `json:"rw,omitempty"`
}
