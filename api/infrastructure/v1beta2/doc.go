// Package v1beta2 holds the Cluster API infrastructure provider kinds for
// bare metal at infrastructure.cluster.x-k8s.io/v1beta2: Metal3Cluster,
// Metal3ClusterTemplate, Metal3Machine, Metal3MachineTemplate,
// Metal3DataTemplate, Metal3Data, Metal3DataClaim, Metal3Remediation and
// Metal3RemediationTemplate.
//
// Field names, types and validation follow upstream
// cluster-api-provider-metal3's v1beta2, written here because upstream's API
// module does not build with Cluster API v1.14. Every kind is the conversion
// hub (conversion.Hub); the v1beta1 kinds of ../v1beta1 convert to and
// from it.
//
// The stored version, served beside v1beta1: metal3-operator converts
// through its conversion webhook (operatorkit.ConversionWebhook), which the
// CRDs as installed name (config/metal3/crd). Without the webhook nothing
// of v1beta1 can be read or written, so every CRD of CRDNames must point at
// a running one before its objects are used (the raw CRDs of
// config/metal3/crd/bases convert nothing).
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1beta2
