// Package baremetalhost is the BareMetalHost controller: the upstream host
// state machine (registering, inspecting, preparing, available,
// provisioning, provisioned, deprovisioning, powering off before delete,
// deleting; externally provisioned and unmanaged beside them) driven over a
// provisioner.Provisioner, with no Ironic. Reconcile fetches the host,
// honours the paused and detached annotations and the status annotation
// used when hosts move between clusters, refuses a host whose userData,
// networkData or metaData names a Secret of another namespace (its status
// names the field; nothing is read, nothing reaches the BMC, no finalizer
// is added), keeps the finalizer, resolves the BMC credentials, then runs
// the handler of the host's state (states.go). Every Secret is read in the
// host's own namespace.
// A handler changes the host's status only; Reconcile writes it once.
package baremetalhost
