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

// Every kind of this package is the conversion hub of its group: the
// v1beta1 kinds convert to and from it (see ../v1beta1/conversion.go).

// Hub marks Metal3Cluster as the conversion hub.
func (*Metal3Cluster) Hub() {}

// Hub marks Metal3ClusterList as the conversion hub.
func (*Metal3ClusterList) Hub() {}

// Hub marks Metal3ClusterTemplate as the conversion hub.
func (*Metal3ClusterTemplate) Hub() {}

// Hub marks Metal3ClusterTemplateList as the conversion hub.
func (*Metal3ClusterTemplateList) Hub() {}

// Hub marks Metal3Machine as the conversion hub.
func (*Metal3Machine) Hub() {}

// Hub marks Metal3MachineList as the conversion hub.
func (*Metal3MachineList) Hub() {}

// Hub marks Metal3MachineTemplate as the conversion hub.
func (*Metal3MachineTemplate) Hub() {}

// Hub marks Metal3MachineTemplateList as the conversion hub.
func (*Metal3MachineTemplateList) Hub() {}

// Hub marks Metal3DataTemplate as the conversion hub.
func (*Metal3DataTemplate) Hub() {}

// Hub marks Metal3DataTemplateList as the conversion hub.
func (*Metal3DataTemplateList) Hub() {}

// Hub marks Metal3Data as the conversion hub.
func (*Metal3Data) Hub() {}

// Hub marks Metal3DataList as the conversion hub.
func (*Metal3DataList) Hub() {}

// Hub marks Metal3DataClaim as the conversion hub.
func (*Metal3DataClaim) Hub() {}

// Hub marks Metal3DataClaimList as the conversion hub.
func (*Metal3DataClaimList) Hub() {}

// Hub marks Metal3Remediation as the conversion hub.
func (*Metal3Remediation) Hub() {}

// Hub marks Metal3RemediationList as the conversion hub.
func (*Metal3RemediationList) Hub() {}

// Hub marks Metal3RemediationTemplate as the conversion hub.
func (*Metal3RemediationTemplate) Hub() {}

// Hub marks Metal3RemediationTemplateList as the conversion hub.
func (*Metal3RemediationTemplateList) Hub() {}
