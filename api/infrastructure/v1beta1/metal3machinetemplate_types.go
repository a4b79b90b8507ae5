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

// Metal3MachineTemplateSpec is the Metal3Machine that Cluster API clones
// for each Machine of a MachineDeployment or control plane.
type Metal3MachineTemplateSpec struct {
	// template is the Metal3Machine to clone.
	// +required
	Template Metal3MachineTemplateResource `json:"template"`
	// nodeReuse true: during a rolling update, a machine made from this
	// template takes a host released by a machine of the same template
	// (marked with the host's nodeReuse label) before any other.
	// +kubebuilder:default=false
	// +optional
	NodeReuse bool `json:"nodeReuse"`
}

// Metal3MachineTemplateResource is the cloned Metal3Machine.
type Metal3MachineTemplateResource struct {
	// metadata given to each clone.
	// +optional
	ObjectMeta ObjectMeta `json:"metadata,omitempty"`
	// spec of each clone.
	// +required
	Spec Metal3MachineSpec `json:"spec"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3machinetemplates,scope=Namespaced,categories=cluster-api,shortName=m3mt;m3machinetemplate;m3machinetemplates;metal3mt;metal3machinetemplate
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="NodeReuse",type="boolean",JSONPath=".spec.nodeReuse"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Metal3MachineTemplate is a Metal3Machine to clone per Machine.
type Metal3MachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec Metal3MachineTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// Metal3MachineTemplateList is a list of Metal3MachineTemplates.
type Metal3MachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3MachineTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3MachineTemplate{}, &Metal3MachineTemplateList{})
}
