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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ArmadaManifestSpec is the desired state of a whole Armada deployment. Its
// fields are those of Armada's armada/Manifest/v2 document, plus
// enable_chart_cleanup (an Armada apply option) and target_state from the
// first Armada operator.
type ArmadaManifestSpec struct {
	// release_prefix is prepended, with a dash, to the release name of every
	// chart the manifest deploys ("<release_prefix>-<release>"), so releases
	// of different manifests do not collide and can be found again.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=51
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ReleasePrefix string `json:"release_prefix"`

	// chart_groups lists the metadata.name of each ArmadaChartGroup, all in
	// this object's namespace. Groups are deployed strictly in this order:
	// a group starts once the previous one is satisfied.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ChartGroups []string `json:"chart_groups"`

	// enable_chart_cleanup uninstalls Helm releases that carry this
	// manifest's release_prefix but belong to no chart of the manifest any
	// more, like Armada's `apply --enable-chart-cleanup`. Defaults to false.
	// +optional
	EnableChartCleanup bool `json:"enable_chart_cleanup,omitempty"`

	// target_state is the state the manifest drives its groups to: deployed
	// deploys them in order, uninstalled removes their releases, and
	// uninitialized leaves them alone. Defaults to deployed.
	// +optional
	// +kubebuilder:default=deployed
	TargetState TargetState `json:"target_state,omitempty"`
}

// ArmadaManifestStatus is the observed state of an ArmadaManifest.
type ArmadaManifestStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Ready, Reconciling and Stalled, kstatus style.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// satisfied is true when every group of the manifest is satisfied.
	// +optional
	Satisfied bool `json:"satisfied"`

	// currentGroup is the group being deployed, empty when none is.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	CurrentGroup string `json:"currentGroup,omitempty"`

	// totalGroups is the number of groups listed in chart_groups.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TotalGroups int32 `json:"totalGroups,omitempty"`

	// satisfiedGroups is how many of them are satisfied.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SatisfiedGroups int32 `json:"satisfiedGroups,omitempty"`

	// unsatisfiedGroups names the groups that are not satisfied yet, in
	// chart_groups order; a group that does not exist is listed too.
	// +optional
	// +listType=atomic
	UnsatisfiedGroups []string `json:"unsatisfiedGroups,omitempty"`

	// summary is "<satisfiedGroups>/<totalGroups>", for kubectl get.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Summary string `json:"summary,omitempty"`
}

// ArmadaManifest deploys ArmadaChartGroups in order under one release prefix.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=armadamanifests,scope=Namespaced,shortName=amf,categories=armada
// +kubebuilder:printcolumn:name="Prefix",type=string,JSONPath=`.spec.release_prefix`,description="Release name prefix"
// +kubebuilder:printcolumn:name="Groups",type=string,JSONPath=`.status.summary`,description="Satisfied groups out of all groups"
// +kubebuilder:printcolumn:name="Current",type=string,JSONPath=`.status.currentGroup`,description="Group being deployed",priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Status of the Ready condition"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ArmadaManifest struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the manifest.
	// +required
	Spec ArmadaManifestSpec `json:"spec"`

	// status is the observed state of the manifest.
	// +optional
	Status ArmadaManifestStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ArmadaManifestList is a list of ArmadaManifest.
type ArmadaManifestList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ArmadaManifests.
	Items []ArmadaManifest `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ArmadaManifest{}, &ArmadaManifestList{})
}
