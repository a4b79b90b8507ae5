// Package clusterctl is the Clusterctl executor: clusterctl init of Cluster
// API providers from local repositories built with kustomize, and
// clusterctl move of one or more namespaces from the phase's cluster's
// parent in the ClusterMap to that cluster (a pivot), both with
// clusterctl's library, and the status of each.
//
// A move of several namespaces (move-options.namespace, then the
// extension move-options.namespaces) is one step that a rerun finishes:
// clusterctl's checks run for every namespace first, then every namespace
// is marked being moved on the source (apply.MovingToAnnotation), so the
// source's phases leave them all alone, then each is moved in order and
// marked moved (apply.MovedToAnnotation). A run that stops half-way leaves
// the rest marked being moved, and running the phase again moves what is
// left. What to do with each namespace is decided (planMove) apart from
// doing it (runMove).
package clusterctl
