// Package ipam serves IPClaims from IPPools (ipam.metal3.io/v1alpha1), as
// metal3-io/ip-address-manager does.
//
// The allocator (Allocate, Ranges, AddressName) is pure: given a pool's
// spec and the addresses in use it picks the next free address, IPv4 or
// IPv6, honouring pre-allocations and an ipAddress annotation, and reports
// an exhausted pool by name.
//
// The reconciler works one IPPool at a time. The pool's status.indexes is
// the record of what is allocated: new allocations are written to it with
// the resourceVersion read, so a stale read ends in a conflict and a retry,
// never in one address given twice. Only after that write are the
// IPAddress objects created (named <namePrefix or pool name>-<address with
// dots and colons as dashes>, owned by the pool and the claim) and the
// claims' status.address set (with the optimistic lock: package capi's
// SetClaimStatus, as the Metal3DataTemplate reconciler writes its claims).
// A deleted claim's IPAddress is deleted and its address returned to the
// pool before the claim's finalizer goes.
// Pools serve only claims of their own namespace: a claim whose spec.pool
// names another namespace is never served, and a pool of that name in the
// claim's namespace writes why in its status.errorMessage. A pool of a
// paused Cluster (package capi's Paused) is left alone.
package ipam
