// Package metal3operator is the Metal3 operator process cmd/metal3-operator
// runs, as an operatorkit.Operator: the controllers --controllers selects
// (BareMetalHost over the Redfish provisioner, Metal3Cluster,
// Metal3Machine, Metal3DataTemplate and Metal3Data, IPPool), after the
// CRDs of the kinds they need are served, on operatorkit's shared manager
// settings.
package metal3operator
