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

// Metal3RemediationTemplateSpec is the Metal3Remediation a
// MachineHealthCheck creates for each unhealthy Machine.
type Metal3RemediationTemplateSpec struct {
	// template is the Metal3Remediation to create.
	// +required
	Template Metal3RemediationTemplateResource `json:"template"`
}

// Metal3RemediationTemplateResource is the created Metal3Remediation.
type Metal3RemediationTemplateResource struct {
	// spec of each Metal3Remediation.
	// +required
	Spec Metal3RemediationSpec `json:"spec"`
}

// Metal3RemediationTemplateStatus is upstream's status of the template: a
// Metal3Remediation's status, unused.
type Metal3RemediationTemplateStatus struct {
	// status of a Metal3Remediation.
	// +optional
	Status Metal3RemediationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=metal3remediationtemplates,scope=Namespaced,categories=cluster-api,shortName=m3rt;m3remediationtemplate;m3remediationtemplates;metal3rt;metal3remediationtemplate
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"

// Metal3RemediationTemplate is the remediation a MachineHealthCheck
// applies to the unhealthy Machines it watches.
type Metal3RemediationTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Metal3RemediationTemplateSpec   `json:"spec,omitempty"`
	Status Metal3RemediationTemplateStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// Metal3RemediationTemplateList is a list of Metal3RemediationTemplates.
type Metal3RemediationTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3RemediationTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3RemediationTemplate{}, &Metal3RemediationTemplateList{})
}
