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

// Package v1alpha1 holds the airshipit.org/v1alpha1 document kinds that
// describe how a site is deployed: Phase, PhasePlan, ClusterMap, KubeConfig,
// the executor kinds (KubernetesApply, Clusterctl, BaremetalManager,
// GenericContainer), ManifestMetadata (metadata.yaml) and Config (the
// airshipctl configuration file, with its manifests and repositories).
//
// These are documents read from a site's phase bundle or from disk, not
// objects stored in a cluster, so they have no CRDs. Group, kinds and JSON
// field names follow upstream airshipctl so existing Airship sites load
// unchanged. Besides the generated deepcopy code, the only methods are the
// rules that belong to a type wherever it is read: ProviderList accepts
// upstream's comma-separated form, RepoCheckout.Validate refuses a
// checkout naming more than one revision, and PhasePlan.AllPhases lists a
// plan's steps, legacy phaseGroups included.
//
// +kubebuilder:object:generate=true
// +groupName=airshipit.org
package v1alpha1
