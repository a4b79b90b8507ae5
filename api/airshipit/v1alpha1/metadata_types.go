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

// ManifestMetadata is a site's metadata.yaml: where its phase bundle,
// executor bundles and host inventory are.
type ManifestMetadata struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// phase locates the phase bundle and executor bundles.
	// +optional
	Phase PhaseSpec `json:"phase,omitempty"`
	// inventory locates the host inventory.
	// +optional
	Inventory InventorySpec `json:"inventory,omitempty"`
}

// PhaseSpec locates the phase bundle and executor bundles.
type PhaseSpec struct {
	// path of the phase bundle's kustomize root, relative to targetPath +
	// phase repository directory.
	// +optional
	Path string `json:"path,omitempty"`
	// docEntryPointPrefix is put before every phase's documentEntryPoint.
	// +optional
	DocEntryPointPrefix string `json:"docEntryPointPrefix,omitempty"`
}

// InventorySpec locates the host inventory.
type InventorySpec struct {
	// path of the inventory's kustomize root.
	// +optional
	Path string `json:"path,omitempty"`
}
