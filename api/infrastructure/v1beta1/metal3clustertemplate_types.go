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

// Metal3ClusterTemplateSpec is the Metal3Cluster a ClusterClass stamps out
// for each of its Clusters.
type Metal3ClusterTemplateSpec struct {
	// template is the Metal3Cluster to create.
	// +required
	Template Metal3ClusterTemplateResource `json:"template"`
}

// Metal3ClusterTemplateResource is the Metal3Cluster created from the
// template.
type Metal3ClusterTemplateResource struct {
	// metadata given to each Metal3Cluster (not in upstream v1beta1; as in
	// v1beta2 and this package's Metal3MachineTemplate).
	// +optional
	ObjectMeta ObjectMeta `json:"metadata,omitempty"`
	// spec of each Metal3Cluster.
	// +required
	Spec Metal3ClusterSpec `json:"spec"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3clustertemplates,scope=Namespaced,categories=cluster-api,shortName=m3ct
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Metal3ClusterTemplate is a Metal3Cluster for ClusterClass to create.
type Metal3ClusterTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec Metal3ClusterTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// Metal3ClusterTemplateList is a list of Metal3ClusterTemplates.
type Metal3ClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3ClusterTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3ClusterTemplate{}, &Metal3ClusterTemplateList{})
}
