// Package netdata reads a BareMetalHost's addresses from its networkData
// Secret: the OpenStack network_data.json form Metal3 passes to
// cloud-init (links, networks, services), as JSON or YAML. A network is
// found by its id or by the id of its link, so a service's
// nodeInterfaceId may name either ("oam-ipv4", or the NIC "enp1s0"). The
// document is outside input: a value quoted in an error is cut to 100
// bytes, and FuzzParse checks Parse never panics.
package netdata
