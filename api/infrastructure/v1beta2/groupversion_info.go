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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is upstream CAPM3's group at version v1beta2.
	GroupVersion = schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2"}

	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a runtime.Scheme.
	AddToScheme = schemeBuilder.AddToScheme

	// CRDNames are the CRDs of this group, each serving v1beta1 and
	// v1beta2 and storing v1beta2.
	CRDNames = []string{
		"metal3clusters.infrastructure.cluster.x-k8s.io",
		"metal3clustertemplates.infrastructure.cluster.x-k8s.io",
		"metal3datas.infrastructure.cluster.x-k8s.io",
		"metal3dataclaims.infrastructure.cluster.x-k8s.io",
		"metal3datatemplates.infrastructure.cluster.x-k8s.io",
		"metal3machines.infrastructure.cluster.x-k8s.io",
		"metal3machinetemplates.infrastructure.cluster.x-k8s.io",
		"metal3remediations.infrastructure.cluster.x-k8s.io",
		"metal3remediationtemplates.infrastructure.cluster.x-k8s.io",
	}

	// objectTypes are the kinds of this package; each file that declares a
	// kind appends it and its list from init.
	objectTypes []runtime.Object
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, objectTypes...)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
