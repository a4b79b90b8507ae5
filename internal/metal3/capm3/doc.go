// Package capm3 is the Cluster API infrastructure provider for bare metal:
// the Metal3Cluster and Metal3Machine controllers, which turn Cluster API
// Machines into provisioned BareMetalHosts, and the Metal3Remediation
// controller, which reboots the host of a Machine a MachineHealthCheck
// found unhealthy.
//
// # Metal3Cluster
//
// A Metal3Cluster owned by a Cluster (Cluster API sets the owner reference)
// is ready once it has a control-plane endpoint: spec.controlPlaneEndpoint,
// or the https URL of the older spec.apiEndpoint, which the controller
// copies into spec.controlPlaneEndpoint. Status: ready and
// initialization.provisioned true, apiEndpoints, the Ready condition.
// Deleting waits until no Metal3Machine of the cluster remains.
//
// # Metal3Machine
//
// Each step shows in a condition and in status.phase; a step waiting on
// something returns the reconcile kit's WaitingError naming its condition,
// a spec that cannot work a StalledError (status.failureReason), and the
// status is written once per pass, with the optimistic lock, when it
// changed:
//
//  0. Refuse (status.failureMessage naming the field, before the
//     finalizer and before any host is claimed) a spec.userData,
//     spec.metaData, spec.networkData or spec.dataTemplate naming another
//     namespace (package refs), and a spec.hostSelector no label selector
//     can be built from (HostSelector: an operator such as metav1's
//     DoesNotExist, which the CRD accepts).
//  1. Wait for the owner Machine, the Cluster's infrastructure and the
//     bootstrap data Secret (Machine spec.bootstrap.dataSecretName).
//  2. Choose a host (AssociateBareMetalHost): in the Metal3Machine's
//     namespace, matching spec.hostSelector, available or ready, without
//     error, not paused, not being deleted, not consumed, not marked
//     unhealthy by remediation (capm3.metal3.io/unhealthy). A host already
//     consumed by this machine is taken back first; with nodeReuse, a host
//     its machine set or control plane released. The claim sets the host's
//     consumerRef with an update that carries the resourceVersion read, so
//     two machines never take one host; in one process, machines also skip
//     hosts another worker is claiming, and spread over the candidates by
//     their UID, so that fifty machines created at once do not all race for
//     the first host. The host's name goes into the annotation
//     metal3.io/BareMetalHost.
//  3. With spec.dataTemplate, a Metal3DataClaim of the machine's name asks
//     for rendered meta-data and network-data (Metal3DataReady); the
//     Metal3Data's Secrets are used once it is ready.
//  4. Write the host: image (or customDeploy), userData (spec.userData or
//     the bootstrap data Secret), metaData, networkData, online: true,
//     automatedCleaningMode.
//  5. When the host is provisioned (HostProvisioned): providerID
//     metal3://<BareMetalHost uid>, also on the workload cluster's Node
//     found by the label metal3.io/uuid when the Metal3Cluster says no
//     cloud provider sets it (noCloudProvider: true or
//     cloudProviderEnabled: false); addresses from the host's NICs and
//     hostname; ready and initialization.provisioned true.
//
// Deleting a Metal3Machine deprovisions its host (image, user-data and
// data Secrets removed, online false), waits until the host is available
// again, and releases it: consumerRef cleared, or, with nodeReuse on the
// machine's template, kept on the Cluster with the node-reuse label naming
// the machine set or control plane.
//
// # Metal3Remediation
//
// Cluster API's MachineHealthCheck creates a Metal3Remediation from the
// Metal3RemediationTemplate it names, for each unhealthy Machine (same
// name, owned by the Machine). With the Reboot strategy
// (RemediationReconciler): the host is kept off with a suffixed reboot
// annotation (reboot.metal3.io/metal3-remediation-<name>); once it is off
// the Machine's Node is deleted, its labels and annotations kept on the
// remediation; the annotation goes, the host powers on, and the Node that
// registers again gets its labels and annotations back. A try that brings
// no Node back within strategy.timeout is repeated up to
// strategy.retryLimit times; then the host is marked
// capm3.metal3.io/unhealthy and the Machine's OwnerRemediated condition
// set False, so that its MachineSet replaces it.
//
// # Moves
//
// While the Cluster is paused (clusterctl move pauses it; paused means
// what package capi's Paused says, the same for the Metal3Data and IPPools
// of the Cluster), each claimed host gets the paused annotation baremetalhost.metal3.io/paused:
// metal3.io/capm3 and a copy of its status in baremetalhost.metal3.io/status,
// so that the move carries the status to the target cluster, where the
// BareMetalHost controller restores it. Unpausing removes the pause.
package capm3
