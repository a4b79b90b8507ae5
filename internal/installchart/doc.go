// Package installchart generates the Helm chart charts/airship-operators
// from the kustomize build of config/default, and renders that chart with
// the Helm SDK.
//
// config/default is the one hand-written source of the install: the chart
// is derived from it (hack/chart, run by `make generate`), so a Helm user
// and a `kubectl apply -k` user get the same objects. With default values
// the rendered chart equals the kustomize build object for object; values
// change only what the chart parameterises: which operators are installed,
// each one's image (repository, tag or digest), replicas, resources and
// scheduling, args, volumes and mounts appended to config/default's, the
// source of the volumes Operators name (the Armada operator's charts), the
// pull policy and pull secrets, and whether the objects keep their own
// namespaces (armada-system, metal3-system, sip-system, promenade-system,
// as config/default) or all go into the release's.
//
// CustomResourceDefinitions go to the chart's crds/ directory: Helm
// installs them before the templates, whichever operators are enabled
// (SIP reads Metal3's BareMetalHosts, so a SIP-only install needs them
// too), and never upgrades or deletes them.
package installchart
