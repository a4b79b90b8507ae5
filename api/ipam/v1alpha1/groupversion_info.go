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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is upstream ip-address-manager's group and version:
	// existing IPPool, IPClaim and IPAddress documents apply unchanged.
	GroupVersion = schema.GroupVersion{Group: "ipam.metal3.io", Version: "v1alpha1"}

	// SchemeBuilder collects the kinds of this package.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
