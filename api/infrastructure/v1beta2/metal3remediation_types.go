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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RemediationType names a way to remediate a machine.
type RemediationType string

// RemediationFinalizer holds a Metal3Remediation until its host is left in
// a known state.
const RemediationFinalizer = "metal3remediation.infrastructure.cluster.x-k8s.io"

// RebootRemediationStrategy power-cycles the machine's host.
const RebootRemediationStrategy RemediationType = "Reboot"

// Values of a Metal3Remediation's status.phase (upstream names them
// Phase<Name>; the names here are ../v1beta1's).
const (
	// RemediationPhaseRunning: a remediation step is under way.
	RemediationPhaseRunning = "Running"
	// RemediationPhaseWaiting: the last step is done; its outcome is
	// awaited.
	RemediationPhaseWaiting = "Waiting"
	// RemediationPhaseDeleting: remediation failed and the Machine is being
	// deleted.
	RemediationPhaseDeleting = "Deleting machine"
	// RemediationPhaseFailed: the host will not be remediated (for example
	// it was powered off on purpose).
	RemediationPhaseFailed = "Failed"
)

// Metal3RemediationSpec says how to remediate an unhealthy machine.
type Metal3RemediationSpec struct {
	// strategy is the remediation to apply.
	// +optional
	Strategy *RemediationStrategy `json:"strategy,omitempty"`
}

// RemediationStrategy is a kind of remediation and its retries.
type RemediationStrategy struct {
	// type of remediation; only Reboot.
	// +optional
	// +kubebuilder:validation:Enum=Reboot
	Type RemediationType `json:"type,omitempty"`

	// retryLimit is how many times remediation is tried.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	RetryLimit int32 `json:"retryLimit,omitempty"`

	// timeoutSeconds is the wait between two tries (timeout in v1beta1);
	// a large one stalls remediation as long.
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:default=600
	// +optional
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
}

// Metal3RemediationStatus is how far remediation went.
type Metal3RemediationStatus struct {
	// phase is one of Running, Waiting, Deleting machine, Failed.
	// +optional
	// +kubebuilder:validation:Enum=Running;Waiting;Deleting machine;Failed
	Phase string `json:"phase,omitempty"`

	// retryCount is how many tries were made.
	// +optional
	// +kubebuilder:validation:Minimum=1
	RetryCount int32 `json:"retryCount,omitempty"`

	// lastRemediated is when the last try started.
	// +optional
	LastRemediated *metav1.Time `json:"lastRemediated,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=metal3remediations,scope=Namespaced,categories=cluster-api,shortName=m3r;m3remediation
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Retry limit",type=string,JSONPath=".spec.strategy.retryLimit"
// +kubebuilder:printcolumn:name="Retry count",type=string,JSONPath=".status.retryCount"
// +kubebuilder:printcolumn:name="Last Remediated",type=string,JSONPath=".status.lastRemediated"
// +kubebuilder:printcolumn:name="Strategy",type=string,JSONPath=".spec.strategy.type"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase"

// Metal3Remediation is the remediation of one unhealthy Machine's host,
// created by a MachineHealthCheck from a Metal3RemediationTemplate.
type Metal3Remediation struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the remediation asked for.
	// +optional
	Spec Metal3RemediationSpec `json:"spec,omitempty"`
	// status is how far it went.
	// +optional
	Status Metal3RemediationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// Metal3RemediationList is a list of Metal3Remediations.
type Metal3RemediationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metal3Remediation `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Metal3Remediation{}, &Metal3RemediationList{})
}
