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
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true

// Clusterctl is the executor that installs Cluster API providers (init) or
// moves Cluster API objects between clusters (move).
type Clusterctl struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// providers are the provider repositories available to init.
	// +optional
	Providers []*Provider `json:"providers,omitempty"`
	// action is init or move.
	// +required
	Action ActionType `json:"action,omitempty"`
	// init-options say which providers init installs.
	// +optional
	InitOptions *InitOptions `json:"init-options,omitempty"`
	// move-options say what move moves.
	// +optional
	MoveOptions *MoveOptions `json:"move-options,omitempty"`
	// additional-vars are substituted into provider components.
	// +optional
	AdditionalComponentVariables map[string]string `json:"additional-vars,omitempty"`
	// env-vars lets variables come from the environment too.
	// +optional
	EnvVars bool `json:"env-vars,omitempty"`
	// images overrides provider images by component name.
	// +optional
	ImageMetas map[string]ImageMeta `json:"images,omitempty"`
}

// ActionType is a clusterctl action.
// +kubebuilder:validation:Enum=init;move
type ActionType string

// Clusterctl actions.
const (
	ActionInit ActionType = "init"
	ActionMove ActionType = "move"
)

// Provider is a Cluster API provider and where its components come from.
type Provider struct {
	// name of the provider, e.g. cluster-api, kubeadm, metal3.
	// +required
	Name string `json:"name"`
	// type is CoreProvider, BootstrapProvider, ControlPlaneProvider or InfrastructureProvider.
	// +required
	Type string `json:"type"`
	// url of the provider's components: a kustomize root relative to the
	// site's target path, built locally; never fetched from the internet.
	// +optional
	URL string `json:"url,omitempty"`
	// clusterctl-repository is accepted for compatibility.
	// +optional
	IsClusterctlRepository bool `json:"clusterctl-repository,omitempty"`
	// versions maps a version to a kustomize root (older upstream form).
	// +optional
	Versions map[string]string `json:"versions,omitempty"`
	// variable-substitution substitutes ${VAR} in the components.
	// +optional
	VariableSubstitution bool `json:"variable-substitution,omitempty"`
}

// ProviderList is a list of name:version providers. Upstream airshipctl
// writes it as one comma-separated string ("kubeadm:v1.14.2,metal3:v0.1.0");
// both that and a YAML list are read.
type ProviderList []string

// UnmarshalJSON reads a list, or upstream's comma-separated string.
func (l *ProviderList) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*l = nil
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				*l = append(*l, p)
			}
		}
		return nil
	}
	var list []string
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("want a list of name:version providers or one comma-separated string: %w", err)
	}
	*l = list
	return nil
}

// InitOptions choose the providers clusterctl init installs, as name:version.
type InitOptions struct {
	// core-provider, e.g. cluster-api:v1.14.2.
	// +optional
	CoreProvider string `json:"core-provider,omitempty"`
	// bootstrap-providers, e.g. kubeadm:v1.14.2.
	// +optional
	BootstrapProviders ProviderList `json:"bootstrap-providers,omitempty"`
	// infrastructure-providers, e.g. metal3:v1.10.0.
	// +optional
	InfrastructureProviders ProviderList `json:"infrastructure-providers,omitempty"`
	// control-plane-providers, e.g. kubeadm:v1.14.2.
	// +optional
	ControlPlaneProviders ProviderList `json:"control-plane-providers,omitempty"`
	// kubeConfigRef names a KubeConfig document.
	// +optional
	KubeConfigRef *corev1.ObjectReference `json:"kubeConfigRef,omitempty"`
}

// MoveOptions choose what clusterctl move moves.
type MoveOptions struct {
	// namespace holding the Cluster API objects; default the context's.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// namespaces are more namespaces moved by the same phase, in order
	// after namespace: objects that belong together across namespaces
	// (hosts and the SIPCluster that picked them) move as one step. The
	// phase marks all of them being moved before it moves any, so the
	// source's phases leave them alone until it finishes. An extension of
	// this project: upstream airshipctl has namespace only.
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
}

// ImageMeta overrides an image.
type ImageMeta struct {
	// repository of the image.
	// +optional
	Repository string `json:"repository,omitempty"`
	// tag of the image.
	// +optional
	Tag string `json:"tag,omitempty"`
}
