package ironic

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/strictyaml"
)

// Defaults of Options.
const (
	// DefaultPollInterval is Result.RequeueAfter while Ironic works.
	DefaultPollInterval = 10 * time.Second
	// DefaultHTTPTimeout bounds one request to Ironic.
	DefaultHTTPTimeout = 30 * time.Second
	// DefaultMaxResponseBytes caps one answer of Ironic (a node's inventory
	// is the largest, well below it).
	DefaultMaxResponseBytes = 8 << 20
	// DefaultStuckTimeout is Options.StuckTimeout: Ironic's conductor
	// moves a node through verifying, inspecting (out of band), adopting
	// and deleting in seconds; ten minutes is far past any of them.
	DefaultStuckTimeout = 10 * time.Minute
	// DefaultCallbackTimeout is Options.CallbackTimeout: Ironic's own
	// default of [conductor] clean_callback_timeout,
	// deploy_callback_timeout and inspect_wait_timeout (1800 s).
	DefaultCallbackTimeout = 30 * time.Minute
)

// AuthType is how the provisioner authenticates to Ironic.
type AuthType string

// Auth types (Ironic's auth_strategy).
const (
	// NoAuth sends no credentials; refused unless the endpoint's host is a
	// loopback address.
	NoAuth AuthType = "noauth"
	// HTTPBasic sends Username and Password as HTTP basic authentication.
	HTTPBasic AuthType = "http_basic"
)

// Auth authenticates to Ironic.
type Auth struct {
	Type AuthType
	// Username and Password of HTTPBasic.
	Username, Password string
}

// Options configure New.
type Options struct {
	// Endpoint is Ironic's API URL (http://127.0.0.1:6385), with or without
	// a trailing /v1.
	Endpoint string
	// Auth authenticates; the zero value is NoAuth.
	Auth Auth
	// CAFile is a PEM bundle verifying an https Endpoint; empty means the
	// system's roots.
	CAFile string
	// InsecureSkipVerify skips verifying the Endpoint's certificate (tests
	// of a self-signed Ironic only).
	InsecureSkipVerify bool
	// DeployISO is the deploy agent's ISO every node boots for cleaning and
	// deploying (driver_info deploy_iso).
	DeployISO string
	// DeployKernel and DeployRamdisk are the deploy agent's kernel and
	// initramfs (driver_info deploy_kernel and deploy_ramdisk), from which
	// Ironic builds the ISO each host boots, as Metal3's Ironic image does;
	// the two go together, and DeployISO wins where both are set.
	DeployKernel, DeployRamdisk string
	// ImageDownloadSource, when set, is every node's driver_info
	// image_download_source: "http" (the agent downloads the image from
	// its URL) or "local" (the conductor downloads, checks and converts it,
	// and serves it from its own HTTP server); empty keeps Ironic's
	// [agent] image_download_source.
	ImageDownloadSource string
	// BMCs, when set, adds what each host's BMC reports to Ironic's
	// inspection (Ironic 21.4's redfish inspection records NIC MACs, not
	// their names and addresses, nor firmware, CPU model or disks): see
	// mergeBMCDetails. The engine's figures win where both have one.
	BMCs provisioner.BMCFactory
	// PollInterval is Result.RequeueAfter while Ironic works.
	// Default DefaultPollInterval.
	PollInterval time.Duration
	// HTTPTimeout bounds each request. Default DefaultHTTPTimeout.
	HTTPTimeout time.Duration
	// MaxResponseBytes caps each answer. Default DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// StuckTimeout is how long an unlocked node may sit in a state
	// Ironic's conductor works through without a timeout of its own
	// (verifying, inspecting, cleaning, deploying, deleting, adopting, a
	// power change with target_power_state set) before the provisioner
	// reports it stuck and takes it out (doc.go, "Stuck nodes"); it is
	// also the margin past CallbackTimeout. Measured from Ironic's
	// timestamps, so a restarted operator measures the same. Default
	// DefaultStuckTimeout; negative never reports a node stuck.
	StuckTimeout time.Duration
	// CallbackTimeout is the Ironic's [conductor] clean_callback_timeout,
	// deploy_callback_timeout and inspect_wait_timeout: Ironic fails a
	// node in clean wait, wait call-back or inspect wait itself once it
	// passed. The provisioner only reports the wait until CallbackTimeout
	// plus StuckTimeout, when Ironic has clearly not acted (a node in
	// maintenance, the timeouts off), and takes the node out then.
	// Default DefaultCallbackTimeout; negative leaves these states to
	// Ironic alone (reported as waiting, never acted on).
	CallbackTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.HTTPTimeout <= 0 {
		o.HTTPTimeout = DefaultHTTPTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.StuckTimeout == 0 {
		o.StuckTimeout = DefaultStuckTimeout
	}
	if o.CallbackTimeout == 0 {
		o.CallbackTimeout = DefaultCallbackTimeout
	}
	if o.Auth.Type == "" {
		o.Auth.Type = NoAuth
	}
	return o
}

// endpointBase checks o's endpoint and auth and returns the endpoint's
// root (scheme, host, port and any path prefix, without /v1).
func (o Options) endpointBase() (*url.URL, error) {
	if o.Endpoint == "" {
		return nil, errors.New("ironic: the endpoint is empty")
	}
	u, err := url.Parse(o.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("ironic: endpoint %q is not an http(s) URL with a host", redactEndpoint(o.Endpoint))
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("ironic: endpoint %s: user information, a query or a fragment is not allowed (credentials go in Auth)", redactEndpoint(o.Endpoint))
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1")
	if (o.DeployKernel == "") != (o.DeployRamdisk == "") {
		return nil, errors.New("ironic: the deploy kernel and the deploy ramdisk go together: give both or neither")
	}
	switch o.ImageDownloadSource {
	case "", "http", "local":
	default:
		return nil, fmt.Errorf("ironic: image download source %q is not http or local", o.ImageDownloadSource)
	}
	switch o.Auth.Type {
	case NoAuth:
		if !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("ironic: endpoint %s: auth noauth is only allowed on a loopback address; use http_basic", u.Redacted())
		}
	case HTTPBasic:
		if o.Auth.Username == "" || o.Auth.Password == "" {
			return nil, fmt.Errorf("ironic: endpoint %s: auth http_basic needs a username and a password", u.Redacted())
		}
	default:
		return nil, fmt.Errorf("ironic: auth type %q is not supported: use %s or %s", o.Auth.Type, NoAuth, HTTPBasic)
	}
	return u, nil
}

func redactEndpoint(s string) string {
	if u, err := url.Parse(s); err == nil {
		u.User = nil
		u.RawQuery, u.Fragment = "", ""
		return u.String()
	}
	return "(unparsable)"
}

// isLoopback reports whether host is localhost or a loopback IP.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tlsConfig builds the TLS settings of an https endpoint.
func (o Options) tlsConfig() (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // only when asked, for tests
	if o.CAFile == "" {
		return c, nil
	}
	pem, err := os.ReadFile(o.CAFile)
	if err != nil {
		return nil, fmt.Errorf("ironic: reading CA bundle %s: %w", o.CAFile, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ironic: CA bundle %s holds no PEM certificate", o.CAFile)
	}
	c.RootCAs = pool
	return c, nil
}

// basicAuthFile is the file ReadBasicAuthFile reads.
type basicAuthFile struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// ReadBasicAuthFile reads http_basic credentials from a YAML file with the
// keys username and password. The file must not be writable by its group
// nor open to others: 0600, or 0640/0440 as Kubernetes mounts a Secret
// for a non-root container (the pod's fsGroup owns it, read-only, so the
// container's user can read it at all). Errors name the file and never
// quote its contents.
func ReadBasicAuthFile(path string) (Auth, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Auth{}, fmt.Errorf("ironic credentials file: %w", err)
	}
	if fi.Mode().Perm()&0o037 != 0 {
		return Auth{}, fmt.Errorf("ironic credentials file %s has mode %04o: it holds a password, make it 0600 (or 0640 for a Secret volume's fsGroup) or stricter", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Auth{}, fmt.Errorf("ironic credentials file: %w", err)
	}
	var f basicAuthFile
	if err := strictyaml.Unmarshal(data, &f); err != nil {
		return Auth{}, fmt.Errorf("ironic credentials file %s is not YAML with the keys username and password", path)
	}
	if f.Username == "" || f.Password == "" {
		return Auth{}, fmt.Errorf("ironic credentials file %s: username and password must both be set", path)
	}
	return Auth{Type: HTTPBasic, Username: f.Username, Password: f.Password}, nil
}
