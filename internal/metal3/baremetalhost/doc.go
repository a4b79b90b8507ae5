// Package baremetalhost is the BareMetalHost controller: the upstream host
// state machine (registering, inspecting, preparing, available,
// provisioning, provisioned, deprovisioning, powering off before delete,
// deleting; externally provisioned and unmanaged beside them) driven over a
// provisioner.BMC, with no Ironic. Reconcile fetches the host,
// honours the paused and detached annotations and the status annotation
// used when hosts move between clusters, refuses a host whose userData,
// networkData or metaData names a Secret of another namespace (a stalled
// outcome: its status names the field; nothing is read, nothing reaches
// the BMC, no finalizer is added), keeps the finalizer, resolves the BMC
// credentials, then runs the handler of the host's state (states.go).
// Every Secret is read in the host's own namespace.
//
// A handler changes the host's status only and returns the pass's outcome
// (operatorkit's: done, stalled, or a failure it recorded in the status's
// error fields). Reconcile then writes the status once, when it changed
// (lastUpdated aside), with Update: upstream's status is one record of the
// state machine with its own lastUpdated, not a set of conditions patched
// apart. Events go out after the writes; the next pass comes soon after a
// state change, after a backoff counted by status.errorCount after a
// failure, and after the power poll interval for a settled host.
package baremetalhost
