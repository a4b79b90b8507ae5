// Package schema validates documents offline, the way the API server
// would admit them: built-in Kubernetes kinds are decoded strictly into
// their Go types (unknown fields, wrong types), custom resources are
// checked against the OpenAPI schema of a CRD found in the bundle (or in a
// phase's crdList), and airshipit.org documents against airshipctl's own
// types. Nothing is fetched from the network.
package schema
