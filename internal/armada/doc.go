// Package armada is the Armada operator's logic, one package per concern:
// chartsource reads charts from directories, archives and in-site HTTP
// servers; helm drives the Helm v4 SDK against a rest.Config; wait implements
// Armada's wait semantics over jobs, pods and workload controllers; and
// controller holds the controller-runtime reconcilers built on top of them.
package armada
