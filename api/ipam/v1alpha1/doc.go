// Package v1alpha1 holds the IP address management kinds of Metal3
// (ipam.metal3.io/v1alpha1): IPPool, a set of address ranges; IPClaim, a
// request for one address of a pool; and IPAddress, the address given to a
// claim.
//
// Group, version, kinds and JSON field names are upstream
// metal3-io/ip-address-manager's, so existing manifests apply unchanged.
// Upstream's module cannot be built with Cluster API v1.14, so the types are
// written here. One deliberate difference: spec.namePrefix of an IPPool is
// optional, the pool's name standing in for it.
//
// +kubebuilder:object:generate=true
// +groupName=ipam.metal3.io
package v1alpha1
