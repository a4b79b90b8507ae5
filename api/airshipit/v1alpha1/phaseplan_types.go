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

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// +kubebuilder:object:root=true

// PhasePlan is an ordered list of phases run together.
type PhasePlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// description says what the plan is for.
	// +optional
	Description string `json:"description,omitempty"`
	// phases run in order, except where dependsOn says otherwise.
	// +optional
	Phases []PhaseStep `json:"phases,omitempty"`
	// phaseGroups is the older upstream form: groups of phases, each run in
	// order. It is read for compatibility: the phases of every group are
	// appended to phases, group by group.
	// +optional
	PhaseGroups []PhaseGroup `json:"phaseGroups,omitempty"`
	// validation configures `plan validate` of every phase in the plan.
	// +optional
	Validation ValidationConfig `json:"validation,omitempty"`
}

// PhaseStep is one phase within a plan.
type PhaseStep struct {
	// name of a Phase in the phase bundle.
	// +required
	Name string `json:"name"`
	// dependsOn names phases of the same plan that must finish first. When
	// any step of a plan sets it, steps without it depend on nothing and
	// independent steps may run in parallel; when none does, the plan runs
	// strictly in order, as upstream.
	// +optional
	DependsOn []string `json:"dependsOn,omitempty"`
}

// PhaseGroup is the older upstream grouping of phases.
type PhaseGroup struct {
	// name of the group.
	// +optional
	Name string `json:"name,omitempty"`
	// phases of the group, in order.
	// +optional
	Phases []PhaseStep `json:"phases,omitempty"`
}

// AllPhases returns the plan's steps: phases followed by those of the legacy phaseGroups.
func (p *PhasePlan) AllPhases() []PhaseStep {
	steps := append([]PhaseStep(nil), p.Phases...)
	for _, g := range p.PhaseGroups {
		steps = append(steps, g.Phases...)
	}
	return steps
}
