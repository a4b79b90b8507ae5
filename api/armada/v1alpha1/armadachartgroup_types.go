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

// ArmadaChartGroupSpec is the desired state of a set of charts. Its fields
// are those of Armada's armada/ChartGroup/v2 document, plus test_charts from
// v1 and target_state from the first Armada operator.
type ArmadaChartGroupSpec struct {
	// description is free text shown to people.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`

	// chart_group lists the metadata.name of each ArmadaChart in the group,
	// all in this object's namespace, in deployment order when sequenced.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ChartGroup []string `json:"chart_group"`

	// sequenced deploys the charts one after another, each waiting for the
	// previous one to be satisfied; false (the default) deploys them in
	// parallel.
	// +optional
	Sequenced bool `json:"sequenced,omitempty"`

	// test_charts is the Armada v1 group-wide test switch, deprecated by v2
	// in favour of each chart's test.enabled and accepted for older
	// documents. When set, it replaces the default of test.enabled for the
	// group's charts; a chart that sets test.enabled itself keeps its value.
	// Unset leaves the charts' default (tests run).
	// +optional
	TestCharts *bool `json:"test_charts,omitempty"`

	// target_state is the state the group drives its charts to: deployed
	// enables them (in order when sequenced), uninstalled removes their
	// releases, and uninitialized leaves them alone. Defaults to deployed.
	// A manifest that enables the group records its own target in the
	// annotation armada.airshipit.org/target-state, which takes precedence
	// and leaves this field as written.
	// +optional
	// +kubebuilder:default=deployed
	TargetState TargetState `json:"target_state,omitempty"`
}

// ArmadaChartGroupStatus is the observed state of an ArmadaChartGroup.
type ArmadaChartGroupStatus struct {
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

	// targetState is the target state the controller last acted on: the
	// enabling manifest's armada.airshipit.org/target-state annotation when
	// set, else spec.target_state.
	// +optional
	TargetState TargetState `json:"targetState,omitempty"`

	// satisfied is true when every chart of the group is satisfied.
	// +optional
	Satisfied bool `json:"satisfied"`

	// totalCharts is the number of charts listed in chart_group.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TotalCharts int32 `json:"totalCharts,omitempty"`

	// satisfiedCharts is how many of them are satisfied.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SatisfiedCharts int32 `json:"satisfiedCharts,omitempty"`

	// unsatisfiedCharts names the charts that are not satisfied yet, in
	// chart_group order; a chart that does not exist is listed too.
	// +optional
	// +listType=atomic
	UnsatisfiedCharts []string `json:"unsatisfiedCharts,omitempty"`

	// summary is "<satisfiedCharts>/<totalCharts>", for kubectl get.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Summary string `json:"summary,omitempty"`
}

// ArmadaChartGroup deploys a set of ArmadaCharts, in order or in parallel.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=armadachartgroups,scope=Namespaced,shortName=acg,categories=armada
// +kubebuilder:printcolumn:name="Sequenced",type=boolean,JSONPath=`.spec.sequenced`,description="Whether charts are deployed one after another"
// +kubebuilder:printcolumn:name="Charts",type=string,JSONPath=`.status.summary`,description="Satisfied charts out of all charts"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="Status of the Ready condition"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ArmadaChartGroup struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the group.
	// +required
	Spec ArmadaChartGroupSpec `json:"spec"`

	// status is the observed state of the group.
	// +optional
	Status ArmadaChartGroupStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ArmadaChartGroupList is a list of ArmadaChartGroup.
type ArmadaChartGroupList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ArmadaChartGroups.
	Items []ArmadaChartGroup `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ArmadaChartGroup{}, &ArmadaChartGroupList{})
}
