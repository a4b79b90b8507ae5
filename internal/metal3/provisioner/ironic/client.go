package ironic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/redact"
)

// Microversion is the Ironic REST API version of every request; Ironic
// older than it is refused. doc.go says which feature needs which version.
const Microversion = "1.81"

// factory opens provisioners over one client.
type factory struct {
	opts      Options
	base      *url.URL
	client    *gophercloud.ServiceClient
	http      *http.Client
	auth      string // the Authorization header, "" with noauth
	checked   sync.Mutex
	versionOK bool
	// lastFailure and failedAt: the last version check's failure, answered
	// again without a request for versionRetry (Ironic down is not asked
	// once per host and reconcile, each waiting for the timeout).
	lastFailure  error
	failedAt     time.Time
	versionRetry time.Duration
	// now is the clock stuck nodes are measured against Ironic's
	// timestamps with (time.Now; tests set it).
	now func() time.Time

	// mu guards the memory of failures reported and inspections started.
	mu        sync.Mutex
	reported  map[string]string
	inspected map[string]time.Time
	creds     map[string][32]byte
	prepared  map[string]string
	power     map[string]string
}

// New returns a Factory of Ironic provisioners. It checks the options; the
// first Open checks Ironic's API version.
func New(opts Options) (provisioner.Factory, error) {
	return newFactory(opts)
}

func newFactory(opts Options) (*factory, error) {
	opts = opts.withDefaults()
	base, err := opts.endpointBase()
	if err != nil {
		return nil, err
	}
	tlsConfig, err := opts.tlsConfig()
	if err != nil {
		return nil, err
	}
	hc := httplimit.NewClient(httplimit.ClientOptions{
		Timeout:          opts.HTTPTimeout,
		MaxResponseBytes: opts.MaxResponseBytes,
		TLSClientConfig:  tlsConfig,
	})
	f := &factory{opts: opts, base: base, http: hc, versionRetry: versionRetry, now: time.Now, reported: map[string]string{}, inspected: map[string]time.Time{},
		creds: map[string][32]byte{}, prepared: map[string]string{}, power: map[string]string{}}
	sc := &gophercloud.ServiceClient{
		ProviderClient: &gophercloud.ProviderClient{HTTPClient: *hc},
		Endpoint:       base.String() + "/v1/",
		Type:           "baremetal",
		Microversion:   Microversion,
	}
	if opts.Auth.Type == HTTPBasic {
		f.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(opts.Auth.Username+":"+opts.Auth.Password))
		sc.MoreHeaders = map[string]string{"Authorization": f.auth}
	}
	f.client = sc
	return f, nil
}

// Open returns the provisioner of one host, after checking (once per
// factory, until it succeeds) that Ironic speaks Microversion.
func (f *factory) Open(ctx context.Context, h provisioner.Host) (provisioner.Provisioner, error) {
	if err := f.checkVersion(ctx); err != nil {
		return nil, err
	}
	return &ironicHost{f: f, host: h, nodeID: h.ID}, nil
}

// versionsDoc is Ironic's GET / answer (the part read).
type versionsDoc struct {
	Versions []struct {
		ID         string `json:"id"`
		Version    string `json:"version"`
		MinVersion string `json:"min_version"`
	} `json:"versions"`
	DefaultVersion *struct {
		ID         string `json:"id"`
		Version    string `json:"version"`
		MinVersion string `json:"min_version"`
	} `json:"default_version"`
}

// versionRetry is how long a failed version check is answered again
// without a request.
const versionRetry = 2 * time.Second

func (f *factory) checkVersion(ctx context.Context) error {
	f.checked.Lock()
	defer f.checked.Unlock()
	if f.versionOK {
		return nil
	}
	if f.lastFailure != nil && time.Since(f.failedAt) < f.versionRetry {
		return f.lastFailure
	}
	err := f.readVersion(ctx)
	if err != nil {
		f.lastFailure, f.failedAt = err, time.Now()
		return err
	}
	f.versionOK, f.lastFailure = true, nil
	return nil
}

// readVersion reads GET / and checks the API's versions.
func (f *factory) readVersion(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.base.String()+"/", nil)
	if err != nil {
		return fmt.Errorf("ironic %s: %w", f.base.Redacted(), err)
	}
	req.Header.Set("Accept", "application/json")
	if f.auth != "" {
		req.Header.Set("Authorization", f.auth)
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return fmt.Errorf("ironic %s: reading the API versions: %w: %w", f.base.Redacted(), provisioner.ErrEngineUnavailable, redact.Error(err))
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("ironic %s: reading the API versions: %w: %w", f.base.Redacted(), provisioner.ErrEngineUnavailable, redact.Error(err))
	}
	if resp.StatusCode >= 500 {
		return fmt.Errorf("ironic %s: GET / answered %d: %w", f.base.Redacted(), resp.StatusCode, provisioner.ErrEngineUnavailable)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ironic %s: GET / answered %d (check the endpoint and its credentials)", f.base.Redacted(), resp.StatusCode)
	}
	if err := versionSupported(body); err != nil {
		return fmt.Errorf("ironic %s: %w", f.base.Redacted(), err)
	}
	return nil
}

// versionSupported reads a GET / answer and fails unless its v1 API's
// maximum version is at least Microversion (and its minimum at most).
func versionSupported(body []byte) error {
	var doc versionsDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("GET / is not Ironic's list of API versions: %w", err)
	}
	max, min := "", ""
	if doc.DefaultVersion != nil && doc.DefaultVersion.ID == "v1" {
		max, min = doc.DefaultVersion.Version, doc.DefaultVersion.MinVersion
	}
	for _, v := range doc.Versions {
		if v.ID == "v1" {
			max, min = v.Version, v.MinVersion
		}
	}
	if max == "" {
		return errors.New("GET / lists no v1 API version: an Ironic older than the Newton release (API 1.22) or not Ironic")
	}
	if c, err := compareVersions(max, Microversion); err != nil {
		return err
	} else if c < 0 {
		return fmt.Errorf("the API's maximum version is %s; this provisioner needs %s (Ironic 21.4 \"Zed\" or newer)", max, Microversion)
	}
	if min != "" {
		if c, err := compareVersions(min, Microversion); err != nil {
			return err
		} else if c > 0 {
			return fmt.Errorf("the API's minimum version is %s, newer than the %s this provisioner speaks", min, Microversion)
		}
	}
	return nil
}

// compareVersions compares two "1.N" versions.
func compareVersions(a, b string) (int, error) {
	pa, err := parseVersion(a)
	if err != nil {
		return 0, err
	}
	pb, err := parseVersion(b)
	if err != nil {
		return 0, err
	}
	for i := range 2 {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1, nil
			}
			return 1, nil
		}
	}
	return 0, nil
}

func parseVersion(v string) ([2]int, error) {
	maj, minor, ok := strings.Cut(v, ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil {
		return [2]int{}, fmt.Errorf("API version %q is not MAJOR.MINOR", v)
	}
	return [2]int{a, b}, nil
}

// errConflict: Ironic answered 409 (the node is locked by a task, or the
// request does not fit its state now): try again soon.
var errConflict = errors.New("ironic: the node is busy")

// errNotFound: Ironic answered 404.
var errNotFound = errors.New("ironic: not found")

// classify turns a gophercloud error into this package's: no answer, a
// timeout or a 5xx wrap provisioner.ErrEngineUnavailable; 409 wraps
// errConflict; 404 errNotFound. what says what was asked ("get node
// ns~name"). The message holds Ironic's faultstring, never a request body.
func (f *factory) classify(err error, what string) error {
	if err == nil {
		return nil
	}
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) {
		msg := faultString(code.Body)
		switch {
		case code.Actual == http.StatusConflict:
			return fmt.Errorf("ironic %s: %s: %s: %w", f.base.Redacted(), what, msg, errConflict)
		case code.Actual == http.StatusNotFound:
			return fmt.Errorf("ironic %s: %s: %s: %w", f.base.Redacted(), what, msg, errNotFound)
		case code.Actual >= 500:
			return fmt.Errorf("ironic %s: %s: answered %d: %s: %w", f.base.Redacted(), what, code.Actual, msg, provisioner.ErrEngineUnavailable)
		default:
			return fmt.Errorf("ironic %s: %s: answered %d: %s", f.base.Redacted(), what, code.Actual, msg)
		}
	}
	// No answer: refused, reset, timed out, too large.
	return fmt.Errorf("ironic %s: %s: %w: %w", f.base.Redacted(), what, provisioner.ErrEngineUnavailable, redact.Error(stripURL(err)))
}

// stripURL drops the request URL gophercloud and net/http put in a
// transport error (*url.Error), keeping the cause.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// faultString extracts Ironic's error message from an error body:
// {"error_message": "{\"faultstring\": \"...\", ...}"}.
func faultString(body []byte) string {
	var outer struct {
		ErrorMessage json.RawMessage `json:"error_message"`
	}
	if json.Unmarshal(body, &outer) != nil || len(outer.ErrorMessage) == 0 {
		return strings.TrimSpace(redact.Text(truncate(string(body), 300)))
	}
	var inner struct {
		FaultString string `json:"faultstring"`
	}
	var s string
	if json.Unmarshal(outer.ErrorMessage, &s) == nil {
		if json.Unmarshal([]byte(s), &inner) == nil && inner.FaultString != "" {
			return redact.Text(inner.FaultString)
		}
		return redact.Text(truncate(s, 300))
	}
	if json.Unmarshal(outer.ErrorMessage, &inner) == nil && inner.FaultString != "" {
		return redact.Text(inner.FaultString)
	}
	return redact.Text(truncate(string(outer.ErrorMessage), 300))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
