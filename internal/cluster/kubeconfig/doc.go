// Package kubeconfig finds the kubeconfig of each cluster of a site's
// ClusterMap by trying its kubeconfigSources in order: filesystem (a file
// and context), bundle (a KubeConfig document of the phase bundle) and
// clusterAPI (the <cluster>-kubeconfig Secret in the parent cluster, found
// recursively through the map). A --kubeconfig override wins over all.
// Results are cached in memory for the run and written to disk only on
// request, with mode 0600.
package kubeconfig
