// Package sip is the Support Infra Provider part: a SIPCluster
// (api/sip/v1) picks BareMetalHosts for a tenant cluster by role and
// topology, labels them, and runs the cluster's services. Its packages,
// from the bottom: schedule (which hosts, a pure function), netdata (the
// hosts' addresses from their networkData), services (the objects of the
// load balancers, jump host and OIDC provider), controller (the reconcile
// loop) and operator (the manager cmd/sip-operator runs).
package sip
