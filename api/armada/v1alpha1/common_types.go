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

// TargetState is the state a user asks an Armada object to reach.
// +kubebuilder:validation:Enum=uninitialized;deployed;uninstalled
type TargetState string

const (
	// TargetStateUninitialized declares the object but asks the controller to
	// leave it alone. A chart that only serves as another chart's dependency,
	// or one that a group or workflow enables later, starts here.
	TargetStateUninitialized TargetState = "uninitialized"
	// TargetStateDeployed asks for the Helm release to be installed or
	// upgraded to match the spec.
	TargetStateDeployed TargetState = "deployed"
	// TargetStateUninstalled asks for the Helm release to be removed while
	// the object itself is kept.
	TargetStateUninstalled TargetState = "uninstalled"
)

// State is the state the controller last observed for an Armada object.
// It is compared with the target state to compute status.satisfied.
// +kubebuilder:validation:Enum=uninitialized;initialized;pending;running;deployed;uninstalled;failed;error;unknown
type State string

const (
	// StateUninitialized: the object exists but has not been acted upon.
	StateUninitialized State = "uninitialized"
	// StateInitialized: the controller has seen the object and prepared it
	// (finalizer, status) but has not started a Helm action yet.
	StateInitialized State = "initialized"
	// StatePending: the object waits for something outside itself, such as
	// a chart earlier in a sequenced group or a dependency.
	StatePending State = "pending"
	// StateRunning: a Helm action, wait or test is in progress.
	StateRunning State = "running"
	// StateDeployed: the release is installed, waited for and, if enabled,
	// tested.
	StateDeployed State = "deployed"
	// StateUninstalled: the release is not installed.
	StateUninstalled State = "uninstalled"
	// StateFailed: the last Helm action, wait or test failed; the controller
	// retries.
	StateFailed State = "failed"
	// StateError: the object cannot be reconciled without a spec change
	// (for example the chart source does not exist).
	StateError State = "error"
	// StateUnknown: the controller could not determine the state.
	StateUnknown State = "unknown"
)

// Condition types shared by the three kinds. They follow the kstatus
// convention so generic tools (kubectl wait, flux, the apply engine) can read
// them: Ready summarises, Reconciling is true while work is in progress and
// Stalled is true when progress needs a spec change.
const (
	// ReadyCondition is true when the object has reached its target state.
	ReadyCondition = "Ready"
	// ReconcilingCondition is true while the controller is working towards
	// the target state.
	ReconcilingCondition = "Reconciling"
	// StalledCondition is true when the controller cannot make progress
	// without a change to the spec.
	StalledCondition = "Stalled"
)

// Defaults Armada applies when a timeout is left unset (or set to 0). They
// are not CRD defaults because the enclosing objects (wait, test, delete) are
// optional and a CRD default on a nested field only applies when its parent
// is present; controllers read these constants instead.
const (
	// DefaultWaitTimeoutSeconds bounds the wait for a release's resources.
	DefaultWaitTimeoutSeconds int64 = 900
	// DefaultTestTimeoutSeconds bounds a Helm test run.
	DefaultTestTimeoutSeconds int64 = 300
	// DefaultDeleteTimeoutSeconds bounds a Helm uninstall.
	DefaultDeleteTimeoutSeconds int64 = 300
)
