// Package v1 holds the SIPCluster kind (airship.airshipit.org/v1): the
// BareMetalHosts a tenant cluster needs, by role and topology, and the
// services SIP runs for it (load balancers, a jump host, an OIDC
// provider). Field names and JSON tags are upstream SIP's, so its
// documents decode unchanged; auth[] (with connectors' configSecrets), the
// Stalled condition and the status beyond conditions are this project's,
// and so is the validation in the CRD's schema (bounds, enums, name length,
// required fields; upstream's had none), which the controller repeats for
// objects stored before it.
//
// +kubebuilder:object:generate=true
// +groupName=airship.airshipit.org
package v1
