// Package baremetalmanager is the BaremetalManager executor: power and
// boot operations (reboot, power-off, power-on, remote-direct,
// eject-virtual-media) on the BareMetalHosts its spec.hostSelector picks in
// the phase's cluster. Each host's BMC address and credentials come from
// the host (spec.bmc and the Secret it names); the operation runs on all
// hosts at once, bounded, and waits until every host reports the state it
// asked for, up to spec.timeout (default 300 s). Status reports each
// host's power state and, where it boots from virtual media, its virtual CD.
// BMCs are reached as the airship config context's managementConfiguration
// says (executor.Config.Management, through hostops.NewFactory): no proxy
// unless useproxy, certificates verified unless insecure.
// When the selector's namespace was moved to another cluster, or is being
// moved (apply.MovedToAnnotation, apply.MovingToAnnotation: a pivot), its
// hosts are that cluster's: run does nothing and status says where they
// went.
package baremetalmanager
