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
// In the CRDs, not served yet: each kind carries
// +kubebuilder:unservedversion, so the generated CRDs hold this version's
// schema with served: false, and v1beta1 (marked storageversion) stays the
// stored version. metal3-operator serves the conversion webhook
// (--conversion-webhook-bind-address; operatorkit.ConversionWebhook) and
// TestConversionWebhook converts every kind through a real API server with
// this version served and stored. Serving it on a site waits until every
// place the CRDs are installed also runs the webhook: with a version served
// that is not the stored one, every read of it (kubectl's preferred
// version, the garbage collector's) calls the webhook.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1beta2
