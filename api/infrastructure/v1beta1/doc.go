// Package v1beta1 holds the Cluster API infrastructure provider kinds for
// bare metal (infrastructure.cluster.x-k8s.io/v1beta1): Metal3Cluster,
// Metal3ClusterTemplate, Metal3Machine, Metal3MachineTemplate,
// Metal3DataTemplate, Metal3Data, Metal3DataClaim, Metal3Remediation and
// Metal3RemediationTemplate, and their conversion to and from the v1beta2
// hub (../v1beta2; conversion.go).
//
// Group, version, kinds and JSON field names are upstream
// cluster-api-provider-metal3's v1beta1, so existing manifests apply
// unchanged. Upstream's own API module cannot be built with Cluster API
// v1.14, so the types are written here. Status differs where Cluster API
// v1.14 reads it: conditions are []metav1.Condition, and
// status.initialization.provisioned is set beside status.ready, because the
// CRDs carry the v1beta2 contract label (cluster.x-k8s.io/v1beta2: v1beta1).
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1beta1
