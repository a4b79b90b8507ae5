// Package local implements `airshipctl cluster local up|down|status`, the
// commands that run the local control plane of internal/cluster/local.
package local
