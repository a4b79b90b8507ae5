// Package kwok holds the one convention shared by the programs that work
// with kwok (the fake kubelet): the annotation whose "fake" value hands a
// Node to kwok, which marks it Ready and keeps it so. The local control
// plane (internal/cluster/local) starts kwok selecting Nodes by it; the
// Redfish emulator (internal/redfish/emulator) sets and removes it as its
// hosts power on and off. Both import this package rather than each other:
// the emulator has no business with how a control plane is run.
package kwok
