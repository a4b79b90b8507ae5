package bmc

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/airshipit/airship-go/internal/redact"
)

// Driver is how a host's BMC is driven.
type Driver string

const (
	// Redfish drives the BMC over Redfish: power, and booting from virtual
	// media (there is no PXE path without Ironic, so the controller and
	// remote-direct use the virtual CD for redfish:// addresses too).
	Redfish Driver = "redfish"
	// RedfishVirtualMedia is driven as Redfish is; it also asks status
	// readers (powerstatus, a BaremetalManager's status) to show the
	// virtual CD.
	RedfishVirtualMedia Driver = "redfish-virtualmedia"
)

// schemes maps each supported address scheme to its driver and the HTTP
// scheme of the endpoint. "redfish://" means HTTPS, as upstream.
var schemes = map[string]struct {
	driver Driver
	http   string
}{
	"redfish":                    {Redfish, "https"},
	"redfish+http":               {Redfish, "http"},
	"redfish+https":              {Redfish, "https"},
	"redfish-virtualmedia":       {RedfishVirtualMedia, "https"},
	"redfish-virtualmedia+http":  {RedfishVirtualMedia, "http"},
	"redfish-virtualmedia+https": {RedfishVirtualMedia, "https"},
}

// Supported lists the address schemes, for messages and docs.
var Supported = []string{"redfish://", "redfish+http://", "redfish+https://", "redfish-virtualmedia://", "redfish-virtualmedia+http://", "redfish-virtualmedia+https://"}

// Access is a parsed BMC address.
type Access struct {
	// Driver says what the BMC is asked to do.
	Driver Driver
	// Endpoint is the BMC's base URL: scheme, host and port, no path.
	Endpoint string
	// SystemPath is the path of the host's ComputerSystem, such as
	// /redfish/v1/Systems/1; empty means the service's only system.
	SystemPath string
}

// VirtualMedia reports whether the driver boots from virtual media.
func (a Access) VirtualMedia() bool { return a.Driver == RedfishVirtualMedia }

// Parse reads a spec.bmc.address. Errors name the address's scheme and the
// supported ones; they never hold credentials, a query or a fragment: an
// address is quoted only as Redact shows it, and a part that does not
// parse is not quoted at all.
func Parse(address string) (Access, error) {
	if address == "" {
		return Access{}, fmt.Errorf("the BMC address is empty; use one of %s", strings.Join(Supported, ", "))
	}
	scheme, rest, ok := splitScheme(address)
	if !ok {
		return Access{}, fmt.Errorf("the BMC address has no scheme; use one of %s", strings.Join(Supported, ", "))
	}
	s, ok := schemes[strings.ToLower(scheme)]
	if !ok {
		return Access{}, fmt.Errorf("BMC address scheme %q is not supported (no Ironic here): use one of %s", scheme, strings.Join(Supported, ", "))
	}
	// Any '@' is taken for the end of user information, before url.Parse,
	// which would take a password holding '/', '?' or '#' for the end of
	// the host and quote a part of it.
	if strings.Contains(rest, "@") {
		return Access{}, fmt.Errorf("BMC address of scheme %q carries credentials: put them in the credentials Secret (spec.bmc.credentialsName)", scheme)
	}
	u, err := url.Parse(s.http + "://" + rest)
	if err != nil {
		// url.Parse's messages quote the offending part.
		return Access{}, fmt.Errorf("BMC address of scheme %q is not a valid URL (check its host, port and %%-escapes)", scheme)
	}
	if u.Host == "" {
		return Access{}, fmt.Errorf("BMC address %s has no host", Redact(address))
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return Access{}, fmt.Errorf("BMC address %s: a query or fragment is not allowed", Redact(address))
	}
	path := strings.TrimRight(u.Path, "/")
	return Access{Driver: s.driver, Endpoint: s.http + "://" + u.Host, SystemPath: path}, nil
}

// Redact returns an address fit to print, by the project's one rule for
// URLs (redact.URL): a password, a user name alone, a query and a
// fragment become REDACTED; when a '?' or '#' comes before the last '@',
// everything after the scheme does.
func Redact(address string) string {
	return redact.URL(address)
}

// splitScheme cuts "scheme://rest" when scheme is a valid one, so that
// text that is no scheme, such as "user:password@host", is never quoted as
// one.
func splitScheme(address string) (scheme, rest string, ok bool) {
	scheme, rest, ok = strings.Cut(address, "://")
	if !ok || !validScheme(scheme) {
		return "", address, false
	}
	return scheme, rest, true
}

// validScheme reports whether s is an RFC 3986 scheme: a letter, then
// letters, digits, '+', '-' or '.'.
func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}
