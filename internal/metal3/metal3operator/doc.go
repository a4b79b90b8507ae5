// Package metal3operator is the Metal3 operator process cmd/metal3-operator
// runs, as an operatorkit.Operator: the controllers --controllers selects
// (BareMetalHost, Metal3Cluster, Metal3Machine, Metal3DataTemplate and
// Metal3Data, IPPool, Metal3Remediation), on operatorkit's shared manager
// settings. Each
// controller starts once the CRDs of the kinds it needs are served
// (operatorkit.Controller), so with the default controllers a site of
// BareMetalHosts alone, without Cluster API, gets its hosts reconciled
// while the others wait.
//
// The BareMetalHost controller drives a lifecycle provisioner: Ironic's at
// --ironic-endpoint (http_basic credentials from --ironic-credentials-file,
// a private YAML file; without one, noauth, which only a loopback endpoint
// may use; --ironic-ca-file, --deploy-iso, --ironic-image-download-source,
// --provision-poll-interval, --ironic-stuck-timeout and
// --ironic-callback-timeout for nodes stuck in a transitional state), or,
// without an endpoint, the direct one over the hosts' BMCs (Redfish,
// --bmc-timeout). Options.Factory replaces both in tests.
//
// With --conversion-webhook-bind-address it also serves the conversion
// webhook of the infrastructure kinds between v1beta1 and v1beta2
// (Options.Conversion, an operatorkit.ConversionWebhook over the
// ConversionCRDs), behind a Service in a pod or at --conversion-webhook-url
// outside the cluster.
package metal3operator
