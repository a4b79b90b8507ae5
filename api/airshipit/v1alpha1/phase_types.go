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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true

// Phase is one step of a site's deployment: an executor run against a
// document bundle, for one cluster.
type Phase struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is standard object metadata plus clusterName.
	// +optional
	Metadata PhaseMetadata `json:"metadata,omitempty"`
	// config says which executor runs the phase and on which documents.
	// +required
	Config PhaseConfig `json:"config"`
}

// PhaseMetadata is object metadata with the cluster the phase acts on.
// Upstream kept clusterName in metadata (a field Kubernetes has since
// dropped from ObjectMeta), so it lives here to read existing sites.
type PhaseMetadata struct {
	metav1.ObjectMeta `json:",inline"`
	// clusterName names the cluster in the ClusterMap that the phase runs
	// against; its kubeconfig context has the same name.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
}

// PhaseConfig points at the executor document and the executor bundle.
type PhaseConfig struct {
	// executorRef names the executor document (apiVersion, kind, name) in
	// the phase bundle.
	// +required
	ExecutorRef *corev1.ObjectReference `json:"executorRef"`
	// documentEntryPoint is the kustomize root of the executor bundle,
	// relative to targetPath + phase repository + docEntryPointPrefix.
	// Executors that need no documents (clusterctl move) leave it empty.
	// +optional
	DocumentEntryPoint string `json:"documentEntryPoint,omitempty"`
	// siteWideKubeconfig gives the executor a kubeconfig with every cluster
	// of the ClusterMap instead of only the phase's own.
	// +optional
	SiteWideKubeconfig bool `json:"siteWideKubeconfig,omitempty"`
	// validation configures `phase validate`.
	// +optional
	Validation ValidationConfig `json:"validation,omitempty"`
	// cluster is accepted because upstream airshipctl's own phases carry
	// it (upstream ignores it); it is not used: a phase's cluster is
	// metadata.clusterName.
	// +optional
	Cluster string `json:"cluster,omitempty"`
}

// ValidationConfig configures static validation of a bundle's documents.
type ValidationConfig struct {
	// strict rejects fields a schema does not define (default true).
	// +optional
	Strict *bool `json:"strict,omitempty"`
	// ignoreMissingSchemas skips documents whose kind has no schema
	// instead of reporting them.
	// +optional
	IgnoreMissingSchemas *bool `json:"ignoreMissingSchemas,omitempty"`
	// kubernetesVersion is accepted for compatibility; schemas of built-in
	// kinds always come from the Kubernetes version airshipctl is built with.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// schemaLocation is accepted for compatibility and ignored: schemas
	// come from the CRDs in the bundle and crdList, never from the network.
	// +optional
	SchemaLocation string `json:"schemaLocation,omitempty"`
	// kindsToSkip are kinds not validated at all.
	// +optional
	KindsToSkip []string `json:"kindsToSkip,omitempty"`
	// crdList are kustomize entry points, relative to the site's target
	// path, whose CRDs provide extra schemas.
	// +optional
	CRDList []string `json:"crdList,omitempty"`
}
