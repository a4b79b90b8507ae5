package provisioner

import (
	"context"
	"errors"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/bmc"
)

// Errors a Provisioner wraps so callers can tell what went wrong.
var (
	// ErrCredentials: the BMC refused the username or password (401/403).
	ErrCredentials = errors.New("the BMC refused the credentials")
	// ErrUnreachable: the BMC did not answer, timed out or failed (5xx).
	ErrUnreachable = errors.New("the BMC is unreachable")
	// ErrNoSystem: the BMC answers but has no such system.
	ErrNoSystem = errors.New("the BMC has no such system")
	// ErrRefused: the BMC answered a request with a client error other than
	// the above (an action it does not allow, a bad body).
	ErrRefused = errors.New("the BMC refused the request")
)

// Credentials log in to a BMC. They come from the Secret a BareMetalHost's
// spec.bmc.credentialsName names (keys username and password).
type Credentials struct {
	Username string
	Password string
}

// Target is one host's BMC.
type Target struct {
	// Access is the parsed spec.bmc.address.
	Access bmc.Access
	// Credentials log in.
	Credentials Credentials
	// InsecureSkipVerify is spec.bmc.disableCertificateVerification.
	InsecureSkipVerify bool
}

// PowerState of a host.
type PowerState string

// Power states.
const (
	PowerOn  PowerState = "On"
	PowerOff PowerState = "Off"
)

// BootMedia is what a host boots from virtual media: an ISO the BMC
// fetches by URL. Nothing else goes to the BMC: an ISO booted this way
// carries its own configuration.
type BootMedia struct {
	// Image is a live-iso spec.image (or the ISO of a remote-direct boot);
	// only its URL is sent.
	Image metal3v1alpha1.Image
}

// MediaState is the host's virtual CD.
type MediaState struct {
	Inserted bool
	// Image is the inserted image's URL.
	Image string
}

// BMC drives one host's BMC directly (Redfish): power, inventory and
// virtual media. Every method is bounded by ctx and safe to retry. The
// BareMetalHost controller reaches hosts through a Provisioner instead
// (lifecycle.go); airshipctl's baremetal commands and the BaremetalManager
// executor use a BMC.
type BMC interface {
	// Register checks the BMC answers, accepts the credentials and has the system.
	Register(ctx context.Context) error
	// Inspect reads the host's inventory.
	Inspect(ctx context.Context) (*metal3v1alpha1.HardwareDetails, error)
	// PowerState reports whether the host is on.
	PowerState(ctx context.Context) (PowerState, error)
	// PowerOn turns the host on; a host already on is left alone.
	PowerOn(ctx context.Context) error
	// PowerOff turns the host off, gracefully unless force; a host already
	// off is left alone.
	PowerOff(ctx context.Context, force bool) error
	// Reboot restarts the host, gracefully unless force; a host that is off
	// is turned on.
	Reboot(ctx context.Context, force bool) error
	// Boot inserts the media (ejecting other media first), sets the next
	// boot to the virtual CD once, and powers the host on, restarting it
	// when it was on.
	Boot(ctx context.Context, m BootMedia) error
	// EjectMedia ejects any virtual media; nothing inserted is fine.
	EjectMedia(ctx context.Context) error
	// Media reports the virtual CD.
	Media(ctx context.Context) (MediaState, error)
}

// BMCFactory opens a BMC for a host. Implementations may reuse
// connections between calls for the same target.
type BMCFactory interface {
	Open(ctx context.Context, t Target) (BMC, error)
}
