// Package capi holds what the reconcilers of the Cluster API provider
// (packages capm3, data and ipam) must agree on, kept in one place so that
// they cannot disagree: the Cluster an object belongs to, when that object
// is paused (Paused), and how the status of a claim (an IPClaim, a
// Metal3DataClaim) is written (SetClaimStatus).
package capi
