// Package clusterctl is the Clusterctl executor: clusterctl init of Cluster
// API providers from local repositories built with kustomize, and
// clusterctl move between clusters. This package validates and renders;
// running comes with the Cluster API integration.
package clusterctl
