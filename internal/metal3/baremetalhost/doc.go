// Package baremetalhost is the BareMetalHost controller: the upstream host
// state machine (registering, inspecting, preparing, available,
// provisioning, provisioned, deprovisioning, powering off before delete,
// deleting; externally provisioned and unmanaged beside them) driven over a
// provisioner.Provisioner (Ironic, or the direct BMC one). Reconcile
// fetches the host, honours the paused and detached annotations and the
// status annotation used when hosts move between clusters, refuses a host
// whose userData, networkData or metaData names a Secret of another
// namespace (a stalled outcome: its status names the field; nothing is
// read, nothing reaches the provisioner, no finalizer is added), keeps the
// finalizer, resolves the BMC credentials, then runs the handler of the
// host's state (states.go). Every Secret is read in the host's own
// namespace.
//
// Every pass of a managed host opens its Provisioner and registers the
// host first (an engine that lost the host enrolls it again; new
// credentials are checked in place), then the state's handler calls its
// lifecycle step: Inspect, Prepare, Provision, Adopt (every pass of a
// provisioned or externally provisioned host, before power management),
// Deprovision, PowerOn/PowerOff/Reboot, Delete when a deleted host is let
// go, Detach once for the detached annotation. A step's Result that is
// Dirty keeps the host in its state and looks again after the Result's
// RequeueAfter (ProvisionPollInterval when 0): not an error, and nothing
// sent again meanwhile. An ErrorMessage or an error (the BMC, or the
// engine: provisioner.ErrEngineUnavailable) is the state's error type
// (registration, inspection, preparation, provisioning, power management,
// detach error) in the status, retried after a backoff. The
// inspect.metal3.io annotation "disabled" skips inspection; any other
// value on an available or preparing host starts a new inspection and is
// removed when it is done.
//
// A handler changes the host's status only and returns the pass's outcome
// (operatorkit's: done, stalled, or a failure it recorded in the status's
// error fields). Reconcile then writes the status once, when it changed
// (lastUpdated aside), with Update: upstream's status is one record of the
// state machine with its own lastUpdated, not a set of conditions patched
// apart. Events go out after the writes (a PowerOn or PowerOff once per
// transition, when the host is seen in the power state asked for, also
// when the provisioner first answered the request Dirty); the next pass comes soon after a
// state change, after a backoff counted by status.errorCount after a
// failure, after the provisioner's wait while a step is under way, and
// after the power poll interval for a settled host.
package baremetalhost
