// Package kubeconfig is the one place kubeconfigs are found and written.
//
// A cluster of a site's ClusterMap gets its kubeconfig from, in order of
// precedence: --kubeconfig; $KUBECONFIG (a list of files merged as kubectl
// merges them); a kubeconfig file an executor document names; the
// cluster's kubeconfigSources (filesystem: a file and context; bundle: a
// KubeConfig document of the phase bundle; clusterAPI: the
// <cluster>-kubeconfig Secret in the parent cluster, found recursively
// through the map). A cluster that lists no sources takes the context named
// after it from the phase bundle's KubeConfig document, and one with
// dynamicKubeConf: true reads the Secret from its parent. Results are cached
// in memory for the run; Write is the only code that writes a kubeconfig
// file (atomically, mode 0600).
package kubeconfig
