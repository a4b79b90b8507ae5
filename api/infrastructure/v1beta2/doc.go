// Package v1beta2 holds the Cluster API infrastructure provider kinds for
// bare metal at infrastructure.cluster.x-k8s.io/v1beta2: Metal3Cluster,
// Metal3ClusterTemplate, Metal3Machine, Metal3MachineTemplate,
// Metal3DataTemplate, Metal3Data, Metal3DataClaim, Metal3Remediation and
// Metal3RemediationTemplate.
//
// Field names, types and validation follow upstream
// cluster-api-provider-metal3's v1beta2, written here because upstream's API
// module does not build with Cluster API v1.14. Every kind is the conversion
// hub (conversion.Hub) and is marked as the storage version; the v1beta1
// kinds of ../v1beta1 convert to and from it.
//
// Not served yet: each kind carries +kubebuilder:skipversion, which keeps
// this version out of the generated CRDs until the operator runs the
// conversion webhook. controller-gen reads that marker on types only, not on
// the package, and applies a type's markers in no fixed order, so a skipped
// kind cannot also carry version markers (status subresource, printer
// columns): serving this version means removing skipversion and adding
// those (the status subresource on every kind but the two templates of
// Cluster and Machine, printer columns like v1beta1's).
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1beta2
