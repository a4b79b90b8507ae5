// Package redfishemulator is the command line of the redfish-emulator
// binary, on the framework of the project's other commands: --help exits
// 0, a bad flag exits 2 with the usage, `version` prints what it was built
// with.
//
// It serves the hosts of a definition file (--config) or N generated ones
// (--hosts, --racks) until interrupted, and prints one line to standard
// output once it listens:
//
//	redfish-emulator: serving N hosts at http://127.0.0.1:PORT
//
// which scripts and tests parse; its log (power, media, boots, Nodes,
// refused logins) goes to standard error and never holds a password or
// user-data. The password comes from --credentials-file, --password or
// the definition file, in that order of precedence; --password is
// refused on an address beyond loopback, and any such address needs
// --tls-cert and --tls-key. The hosts' disks are sparse files under
// --state-dir (by default a temporary directory removed on exit); a host
// booting Ironic's deploy ISO runs the deploy agent (package ipaagent)
// that writes them. --manifests writes the hosts' BareMetalHosts
// and Secrets (mode 0600, they hold the BMC password) and keeps serving.
// Hosts booted from a config drive (a disk's, or a live ISO that is
// one) become kwok Nodes of the cluster their user-data's kubeadm
// configuration names, when the emulator has credentials for it (from a
// cluster CA in a control-plane host's user-data), else of the
// --target-kubeconfig cluster (package emulator says how).
// --host-api-servers makes each booted control-plane host's address
// answer on 6443 with the API server its user-data names (the address
// added to lo when missing: root), so a load balancer sees hosts powered
// off leave the rotation; --host-api-allow bounds who may connect.
package redfishemulator
