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

// KubernetesApply is the executor that applies a bundle to a cluster and
// waits for it to become ready.
type KubernetesApply struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// config of the apply.
	// +optional
	Config ApplyConfig `json:"config,omitempty"`
}

// InventoryPolicy decides what happens to objects that another inventory
// or nobody owns.
// +kubebuilder:validation:Enum=strict;adopt;force-adopt
type InventoryPolicy string

// Inventory policies.
const (
	InventoryPolicyStrict     InventoryPolicy = "strict"
	InventoryPolicyAdopt      InventoryPolicy = "adopt"
	InventoryPolicyForceAdopt InventoryPolicy = "force-adopt"
)

// ApplyConfig says how to apply, wait and prune.
type ApplyConfig struct {
	// waitOptions say how long and for what to wait.
	// +optional
	WaitOptions ApplyWaitOptions `json:"waitOptions,omitempty"`
	// pruneOptions say whether objects dropped from the bundle are deleted.
	// +optional
	PruneOptions ApplyPruneOptions `json:"pruneOptions,omitempty"`
	// kubeconfig overrides the kubeconfig path.
	// +optional
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// context overrides the kubeconfig context.
	// +optional
	Context string `json:"context,omitempty"`
	// druRun (sic, as upstream spells it) makes the apply a server-side dry run.
	// +optional
	DryRun bool `json:"druRun,omitempty"`
	// debug is accepted for compatibility.
	// +optional
	Debug bool `json:"debug,omitempty"`
	// phaseName overrides the inventory name (defaults to the phase's name).
	// +optional
	PhaseName string `json:"phaseName,omitempty"`
	// inventoryPolicy is strict (default), adopt or force-adopt.
	// +optional
	InventoryPolicy InventoryPolicy `json:"inventoryPolicy,omitempty"`
}

// ApplyWaitOptions say how to wait for applied objects.
type ApplyWaitOptions struct {
	// timeout in seconds; 0 does not wait.
	// +optional
	Timeout int `json:"timeout,omitempty"`
	// pollInterval in seconds.
	// +optional
	PollInterval int `json:"pollInterval,omitempty"`
	// conditions are extra readiness checks by JSONPath.
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
}

// ApplyPruneOptions say whether to prune.
type ApplyPruneOptions struct {
	// prune deletes objects of the phase's inventory that left the bundle.
	// +optional
	Prune bool `json:"prune,omitempty"`
}

// Condition is a JSONPath that must exist (or equal value) on every object
// of the given apiVersion and kind.
type Condition struct {
	metav1.TypeMeta `json:",inline"`
	// jsonPath to evaluate, e.g. {.status.phase}.
	// +optional
	JSONPath string `json:"jsonPath,omitempty"`
	// value the path must have; empty means the path must exist.
	// +optional
	Value string `json:"value,omitempty"`
}
