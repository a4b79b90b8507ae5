// Package local runs a real Kubernetes control plane on the loopback
// interface: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// kwok (which plays the kubelet for fake Nodes), all as background processes
// built from Go modules by hack/testbin.
//
// It is the "ephemeral cluster" of the Airship seeds: `airshipctl cluster
// local up|down|status` drives it, the full-mode test harness starts one per
// test package, and every demo runs on it.
//
// Everything a cluster needs lives in one state directory: PKI, kubeconfigs,
// the etcd data directory, one log file per component and state.json, which
// records the PID and kernel start time of each process so that Down stops
// only processes this package started.
package local
