// Package charts turns a site's Promenade documents into the values of
// Promenade's Helm charts (charts/promenade/<name>) and into the Armada
// manifest that deploys them in the seed's order.
//
// The anchor charts hold no manifests of their own: their values are the
// ConfigMap, Secret and DaemonSet that internal/promenade/anchor renders
// (the one source of the anchors, also behind build-all's anchors.yaml),
// and their template, identical in every anchor chart, installs them as a
// Helm release. kube-proxy, Calico, CoreDNS and the Promenade API are
// ordinary charts whose values come from KubernetesNetwork, HostSystem,
// Genesis, the nodes' labels and the site's certificates: kube-proxy's
// client certificate (PKICatalog document proxy), Calico's etcd members and
// its calico-node certificate.
package charts
