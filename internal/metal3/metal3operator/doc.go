// Package metal3operator is the Metal3 operator process cmd/metal3-operator
// runs, as an operatorkit.Operator: the controllers --controllers selects
// (BareMetalHost, Metal3Cluster, Metal3Machine, Metal3DataTemplate and
// Metal3Data, IPPool), after the CRDs of the kinds they need are served,
// on operatorkit's shared manager settings.
//
// The BareMetalHost controller drives a lifecycle provisioner: Ironic's at
// --ironic-endpoint (http_basic credentials from --ironic-credentials-file,
// a private YAML file; without one, noauth, which only a loopback endpoint
// may use; --ironic-ca-file, --deploy-iso, --ironic-image-download-source,
// --provision-poll-interval, --ironic-stuck-timeout and
// --ironic-callback-timeout for nodes stuck in a transitional state), or,
// without an endpoint, the direct one over the hosts' BMCs (Redfish,
// --bmc-timeout). Options.Factory replaces both in tests.
package metal3operator
