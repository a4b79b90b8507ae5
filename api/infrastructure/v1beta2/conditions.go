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

// Condition types and reasons of this group's kinds. The names and values
// are those of ../v1beta1, which the provider's controllers use, so that
// switching them to this version changes imports, not condition values.

// Condition types common to the kinds of this group.
const (
	// ReadyCondition summarizes an object's state.
	ReadyCondition = "Ready"
	// PausedCondition is True while the object or its Cluster is paused.
	PausedCondition = "Paused"
)

// Metal3Cluster condition reasons.
const (
	// ReadyReason: the endpoint is set and the owner Cluster known.
	ReadyReason = "Ready"
	// WaitingForClusterOwnerReason: no Cluster owns the Metal3Cluster yet.
	WaitingForClusterOwnerReason = "WaitingForClusterOwner"
	// InvalidSpecReason: the spec cannot work (for example no endpoint).
	InvalidSpecReason = "InvalidSpec"
	// DeletingReason: the object is being deleted.
	DeletingReason = "Deleting"
	// WaitingForMachinesDeletedReason: Metal3Machines of the cluster remain.
	WaitingForMachinesDeletedReason = "WaitingForMachinesDeleted"
)

// Metal3Machine condition types; Ready summarizes them.
const (
	// AssociateBareMetalHostCondition: a host is claimed for the machine.
	AssociateBareMetalHostCondition = "AssociateBareMetalHost"
	// Metal3DataReadyCondition: the data template's Secrets are rendered.
	Metal3DataReadyCondition = "Metal3DataReady"
	// HostProvisionedCondition: the claimed host is provisioned.
	HostProvisionedCondition = "HostProvisioned"
)

// Metal3Machine condition reasons.
const (
	WaitingForMachineOwnerReason          = "WaitingForMetal3MachineOwnerRef"
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructureReady"
	WaitingForMetal3ClusterReason         = "WaitingforMetal3Cluster"
	WaitingForBootstrapDataReason         = "WaitingForBootstrapData"
	NoHostAvailableReason                 = "NoAvailableBareMetalHost"
	AssociateBareMetalHostSuccessReason   = "AssociateBareMetalHostSuccess"
	AssociateBareMetalHostFailedReason    = "AssociateBareMetalHostFailed"
	WaitingForMetal3DataReason            = "WaitingForMetal3Data"
	Metal3DataSecretsReadyReason          = "Metal3DataSecretsReady"
	NoDataTemplateReason                  = "NoDataTemplate"
	HostProvisioningReason                = "Provisioning"
	HostProvisionedReason                 = "Provisioned"
	HostErrorReason                       = "HostError"
	WaitingForNodeReason                  = "WaitingForNode"
	ProvisionedReason                     = "Provisioned"
	HostDeprovisioningReason              = "Deprovisioning"
	HostLostReason                        = "HostLost"
	MachineDeletingReason                 = "Deleting"
)
