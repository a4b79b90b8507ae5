// Package baremetal implements `airshipctl baremetal`: listhosts,
// powerstatus, poweron, poweroff, reboot, remotedirect and ejectmedia on
// the BareMetalHosts of a cluster, picked by -l, --name and -n. The
// cluster is a cluster of the site's ClusterMap (--cluster), or a context
// of the user's kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config;
// --context). Each host's BMC address and credentials come from the host.
// BMCs are reached as the current airship config context's
// managementConfiguration says (none without an airship config): no proxy
// unless useproxy, certificates verified unless insecure.
package baremetal
