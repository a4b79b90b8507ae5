// Package site implements the cluster commands that read the site's
// ClusterMap: `cluster list`, `cluster get-kubeconfig` and `cluster status`.
package site
