package bmc

import (
	"fmt"
	"net/url"
	"strings"
)

// Driver is how a host's BMC is driven.
type Driver string

const (
	// Redfish powers the host and sets its boot device over Redfish.
	Redfish Driver = "redfish"
	// RedfishVirtualMedia is Redfish plus booting from virtual media.
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
// supported ones; they never hold credentials (a userinfo part is refused
// without being repeated).
func Parse(address string) (Access, error) {
	if address == "" {
		return Access{}, fmt.Errorf("the BMC address is empty; use one of %s", strings.Join(Supported, ", "))
	}
	scheme, rest, ok := strings.Cut(address, "://")
	if !ok {
		return Access{}, fmt.Errorf("BMC address %q has no scheme; use one of %s", address, strings.Join(Supported, ", "))
	}
	s, ok := schemes[strings.ToLower(scheme)]
	if !ok {
		return Access{}, fmt.Errorf("BMC address scheme %q is not supported (no Ironic here): use one of %s", scheme, strings.Join(Supported, ", "))
	}
	u, err := url.Parse(s.http + "://" + rest)
	if err != nil {
		return Access{}, fmt.Errorf("BMC address of scheme %q: %w", scheme, stripURL(err))
	}
	if u.User != nil {
		return Access{}, fmt.Errorf("BMC address of scheme %q carries credentials: put them in the credentials Secret (spec.bmc.credentialsName)", scheme)
	}
	if u.Host == "" {
		return Access{}, fmt.Errorf("BMC address %q has no host", address)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Access{}, fmt.Errorf("BMC address %q: a query or fragment is not allowed", address)
	}
	path := strings.TrimRight(u.Path, "/")
	return Access{Driver: s.driver, Endpoint: s.http + "://" + u.Host, SystemPath: path}, nil
}

// stripURL drops the URL from a url.Error: it may hold what was refused.
func stripURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
