// Package metal3test holds what tests of the Metal3 infrastructure kinds
// share: since v1beta2 is their stored version, nothing of v1beta1 can be
// read or written until each CRD converts through metal3-operator's
// conversion webhook. ServeConversion runs that webhook alone (for tests
// that run controllers without the operator); WaitConversion waits for an
// operator's to be set on the CRDs.
package metal3test
