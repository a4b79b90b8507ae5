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

// Package v1alpha1 holds the armada.airshipit.org/v1alpha1 API: ArmadaChart
// (one Helm release), ArmadaChartGroup (an ordered or parallel set of charts)
// and ArmadaManifest (an ordered list of groups sharing a release prefix).
//
// Spec fields keep the snake_case names of Armada's armada/Chart/v2,
// armada/ChartGroup/v2 and armada/Manifest/v2 documents so that existing
// Armada data can be pasted under spec unchanged; a few v1-era fields that
// earlier Armada operators accepted are kept too, marked as such. Status is
// written only by the controller and follows Kubernetes conventions
// (camelCase, observedGeneration, metav1.Condition).
//
// +kubebuilder:object:generate=true
// +groupName=armada.airshipit.org
package v1alpha1
