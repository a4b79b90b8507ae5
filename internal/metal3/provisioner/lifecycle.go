package provisioner

import (
	"context"
	"errors"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
)

// ErrEngineUnavailable: the provisioning engine (Ironic) did not answer or
// answered with a server error. The host keeps its state; the controller
// says so in the host's status and tries again after a backoff.
var ErrEngineUnavailable = errors.New("the provisioning engine is unavailable")

// Result says where a lifecycle operation of a Provisioner stands. A
// transport failure (the engine or the BMC not answering) is an error
// returned beside it instead.
type Result struct {
	// Dirty: the operation is under way (the engine is still working on
	// it); the controller keeps the host in its state and calls the same
	// method again after RequeueAfter.
	Dirty bool
	// RequeueAfter is when to look again while Dirty; 0 lets the
	// controller choose.
	RequeueAfter time.Duration
	// ErrorMessage: the operation failed on the engine's side (Ironic's
	// last_error, a failed deploy, a bad image checksum). The controller
	// records it in status.errorMessage with the error type of the host's
	// state and retries after a backoff. It never holds a password.
	ErrorMessage string
	// Progress, while Dirty, may say what the engine is doing and for how
	// long (a node waiting on its agent for 12 minutes, and when the
	// engine or the provisioner will give up on it), for the controller's
	// log; "" says nothing more than Dirty. It never holds a password.
	Progress string
}

// Host is what a Provisioner is told of one BareMetalHost when it is
// opened.
type Host struct {
	// Namespace, Name and UID identify the BareMetalHost. An engine names
	// its record of the host from them (Ironic's node name is
	// "namespace~name", as upstream's).
	Namespace, Name, UID string
	// ID is status.provisioning.ID: the engine's id of the host once
	// registered, "" before.
	ID string
	// BMC is the host's BMC: the parsed spec.bmc.address, the credentials
	// and spec.bmc.disableCertificateVerification.
	BMC Target
	// BootMACAddress is spec.bootMACAddress.
	BootMACAddress string
	// BootMode is spec.bootMode, UEFI when unset.
	BootMode metal3v1alpha1.BootMode
	// Hardware is status.hardware, nil before inspection.
	Hardware *metal3v1alpha1.HardwareDetails
}

// RegisterData is what Register needs besides the Host.
type RegisterData struct {
	// CredentialsChanged: the credentials Secret is new or changed since
	// the engine last accepted it (status.goodCredentials).
	CredentialsChanged bool
	// State is the host's provisioning state: a host registered again in
	// provisioned or externally provisioned is not to be touched (see
	// Adopt).
	State metal3v1alpha1.ProvisioningState
	// AutomatedCleaningMode is spec.automatedCleaningMode.
	AutomatedCleaningMode metal3v1alpha1.AutomatedCleaningMode
	// CurrentImage is status.provisioning.image: what is on the host's
	// disk, if anything.
	CurrentImage *metal3v1alpha1.Image
	// HasCustomDeploy: status.provisioning.customDeploy is set.
	HasCustomDeploy bool
}

// InspectData is what Inspect needs.
type InspectData struct {
	// Refresh: inspect again although an inventory is known (the
	// inspect.metal3.io annotation).
	Refresh bool
}

// PrepareData is what Prepare applies before a host becomes available.
type PrepareData struct {
	RootDeviceHints *metal3v1alpha1.RootDeviceHints
	RAID            *metal3v1alpha1.RAIDConfig
	// Firmware is spec.firmware, deprecated upstream; carried so that a
	// provisioner can refuse it by name rather than ignore it.
	Firmware *metal3v1alpha1.FirmwareConfig //nolint:staticcheck // the deprecated spec.firmware, refused by name
	// AutomatedCleaningMode is spec.automatedCleaningMode.
	AutomatedCleaningMode metal3v1alpha1.AutomatedCleaningMode
}

// ProvisionData is what Provision writes to, or boots on, a host.
type ProvisionData struct {
	// Image is spec.image (nil with a custom deploy and no image).
	Image *metal3v1alpha1.Image
	// CustomDeploy is spec.customDeploy.
	CustomDeploy *metal3v1alpha1.CustomDeploy
	// UserData, NetworkData and MetaData are the config drive's contents:
	// the Secrets' user-data and network-data, and the meta-data as JSON
	// (the defaults upstream puts there with spec.metaData over them).
	UserData, NetworkData, MetaData []byte
	RootDeviceHints                 *metal3v1alpha1.RootDeviceHints
	BootMode                        metal3v1alpha1.BootMode
}

// AdoptData is what Adopt needs.
type AdoptData struct {
	// State is provisioned or externally provisioned.
	State metal3v1alpha1.ProvisioningState
	// Image is status.provisioning.image (empty for externally provisioned).
	Image metal3v1alpha1.Image
}

// DeprovisionData is what Deprovision needs.
type DeprovisionData struct {
	// AutomatedCleaningMode is spec.automatedCleaningMode: metadata
	// erases the disks' metadata, disabled skips cleaning.
	AutomatedCleaningMode metal3v1alpha1.AutomatedCleaningMode
}

// Provisioner takes one BareMetalHost through its lifecycle. It is what
// the BareMetalHost controller drives; there are two: Ironic's
// (provisioner/ironic, the default where an Ironic is configured) and a
// direct one over the host's BMC alone (provisioner/direct: power,
// inspection, and live ISOs booted from virtual media; a disk image is
// refused, nothing is written to disk).
//
// Every method is bounded by ctx and safe to call again: a Dirty result is
// followed by the same call later, and a call that finds its work already
// done returns a clean Result at once. Errors wrap this package's
// sentinels (ErrEngineUnavailable, ErrCredentials, ErrUnreachable, ...).
type Provisioner interface {
	// Register makes sure the engine knows the host and can reach its
	// BMC: enrolls it (or finds it by ID or name, enrolling it again when
	// it was deleted behind the controller's back), updates the
	// credentials when they changed, and is Dirty until the engine has
	// checked them. It returns the engine's id of the host (as soon as it
	// has one, Dirty or not). The controller calls it on every pass of a
	// managed host, except a detached one and one in the deleting state.
	Register(ctx context.Context, d RegisterData) (Result, string, error)
	// Inspect reads the host's inventory; details is nil while Dirty.
	Inspect(ctx context.Context, d InspectData) (Result, *metal3v1alpha1.HardwareDetails, error)
	// Prepare applies root device hints, RAID and firmware settings and
	// makes the host ready to provision; clean when done.
	Prepare(ctx context.Context, d PrepareData) (Result, error)
	// Provision writes the image with its config drive (or boots the live
	// ISO, or runs the custom deploy) and boots the host into it; Dirty
	// until the host is deployed.
	Provision(ctx context.Context, d ProvisionData) (Result, error)
	// Adopt makes an engine that does not know the host as deployed (a
	// new engine after a pivot, or a host provisioned elsewhere) take it
	// as deployed without touching it: no power change, no write. Called
	// on every pass of a provisioned or externally provisioned host.
	Adopt(ctx context.Context, d AdoptData) (Result, error)
	// Deprovision undoes Provision, cleaning as asked, and powers the
	// host off.
	Deprovision(ctx context.Context, d DeprovisionData) (Result, error)
	// Delete makes the engine forget the host.
	Delete(ctx context.Context) (Result, error)
	// Detach makes the engine forget the host without touching it (the
	// detached annotation).
	Detach(ctx context.Context) (Result, error)
	// PowerState reports whether the host is on.
	PowerState(ctx context.Context) (PowerState, error)
	// PowerOn turns the host on; a host already on is left alone. One
	// request per transition: while the request is in flight the result
	// is Dirty and nothing is sent again.
	PowerOn(ctx context.Context) (Result, error)
	// PowerOff turns the host off, gracefully unless force.
	PowerOff(ctx context.Context, force bool) (Result, error)
	// Reboot restarts the host, gracefully unless force; a host that is
	// off is turned on.
	Reboot(ctx context.Context, force bool) (Result, error)
}

// Factory opens a Provisioner for a host.
type Factory interface {
	Open(ctx context.Context, h Host) (Provisioner, error)
}
