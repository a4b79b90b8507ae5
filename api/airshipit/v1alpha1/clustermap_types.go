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

// ClusterMap names the clusters of a site, their parents and where each
// one's kubeconfig comes from.
type ClusterMap struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// map is keyed by cluster name, which is also the kubeconfig context name.
	// +optional
	Map map[string]*Cluster `json:"map,omitempty"`
}

// Cluster is one entry of the ClusterMap.
type Cluster struct {
	// parent is the cluster that manages this one (its Cluster API objects
	// and kubeconfig Secret live there).
	// +optional
	Parent string `json:"parent,omitempty"`
	// kubeconfigSources are tried in order until one yields a kubeconfig.
	// Without any, the cluster's kubeconfig is the context named after it
	// in the phase bundle's KubeConfig document.
	// +optional
	Sources []KubeconfigSource `json:"kubeconfigSources,omitempty"`
	// dynamicKubeConf reads the cluster's kubeconfig from the
	// <cluster>-kubeconfig Secret (namespace default) of its parent, as the
	// clusterAPI source does; it is tried after kubeconfigSources (instead
	// of the KubeConfig document when none are listed). Default false.
	// +optional
	DynamicKubeConfig bool `json:"dynamicKubeConf,omitempty"`
}

// KubeconfigSourceType says where a kubeconfig comes from.
// +kubebuilder:validation:Enum=filesystem;bundle;clusterAPI
type KubeconfigSourceType string

// Kubeconfig source types.
const (
	KubeconfigSourceTypeFilesystem KubeconfigSourceType = "filesystem"
	KubeconfigSourceTypeBundle     KubeconfigSourceType = "bundle"
	KubeconfigSourceTypeClusterAPI KubeconfigSourceType = "clusterAPI"
)

// KubeconfigSource is one place a cluster's kubeconfig may be found.
type KubeconfigSource struct {
	// type is filesystem, bundle or clusterAPI.
	// +required
	Type KubeconfigSourceType `json:"type"`
	// filesystem reads a kubeconfig file.
	// +optional
	FileSystem KubeconfigSourceFilesystem `json:"filesystem,omitempty"`
	// bundle reads the KubeConfig document of the phase bundle.
	// +optional
	Bundle KubeconfigSourceBundle `json:"bundle,omitempty"`
	// clusterAPI reads the <cluster>-kubeconfig Secret from the parent cluster.
	// +optional
	ClusterAPI KubeconfigSourceClusterAPI `json:"clusterAPI,omitempty"`
}

// KubeconfigSourceFilesystem is a kubeconfig file and a context in it.
type KubeconfigSourceFilesystem struct {
	// path of the kubeconfig file; ~ is the home directory.
	// +optional
	Path string `json:"path,omitempty"`
	// contextName in that file; defaults to the cluster name.
	// +optional
	Context string `json:"contextName,omitempty"`
}

// KubeconfigSourceBundle is a context of the bundle's KubeConfig document.
type KubeconfigSourceBundle struct {
	// contextName in the KubeConfig document; defaults to the cluster name.
	// +optional
	Context string `json:"contextName,omitempty"`
}

// KubeconfigSourceClusterAPI is the Cluster API Cluster whose kubeconfig Secret is read.
type KubeconfigSourceClusterAPI struct {
	// clusterNamespacedName of the Cluster API Cluster in the parent cluster.
	// +optional
	NamespacedName NamespacedName `json:"clusterNamespacedName,omitempty"`
	// timeout bounds reading the Secret, as a duration ("30s", the default).
	// +optional
	Timeout string `json:"timeout,omitempty"`
}

// NamespacedName is a name and namespace.
type NamespacedName struct {
	// name of the object.
	// +optional
	Name string `json:"name,omitempty"`
	// namespace of the object.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}
