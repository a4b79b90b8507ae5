package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// hostile modes: what a hostile BMC does on one path.
const (
	streamJSON   = "stream"   // a 200 JSON answer that never ends (400 MiB)
	announceHuge = "announce" // a 200 answer announcing 400 MiB
	streamError  = "error"    // a 500 answer that never ends
	hang         = "hang"     // no answer at all
	pageForever  = "pages"    // a collection whose next page is itself
)

// hostileBMC serves the fake BMC f except on path, where it does what mode
// says; the returned target reaches the system host-0 through it.
func hostileBMC(t *testing.T, f *fakeBMC, path, mode string) provisioner.Target {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			f.serve(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch mode {
		case pageForever:
			_, _ = fmt.Fprintf(w, `{"Members": [{"@odata.id": "%s/CPU0"}], "Members@odata.nextLink": "%s"}`, path, path)
			return
		case hang:
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		case announceHuge:
			w.Header().Set("Content-Length", fmt.Sprint(400<<20))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(`{"Id": "`))
			return
		case streamError:
			w.WriteHeader(http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusOK)
		}
		_, _ = w.Write([]byte(`{"Id": "`))
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 400 << 20 / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	target := f.target("host-0")
	target.Access.Endpoint = srv.URL
	return target
}

// TestHostileBMC: the metal3-operator's provisioner against a BMC that
// answers the service root or a system with a huge body, or not at all.
// Each fails with an error naming the endpoint, the operation and (for a
// body over the cap) the path and the limit, and costs no more than the cap
// in memory and the request timeout in time.
func TestHostileBMC(t *testing.T) {
	const root, system = "/redfish/v1/", "/redfish/v1/Systems/host-0"
	tests := []struct {
		name       string
		path, mode string
		opts       Options
		op         func(context.Context, provisioner.BMC) error // nil: the failure is at Open
		want       []error
		msg        string
	}{
		{"service root streams past the cap", root, streamJSON, Options{}, nil,
			[]error{provisioner.ErrUnreachable}, fmt.Sprintf("connect: the answer to GET %s is larger than the limit of %d bytes", root, DefaultMaxResponseBytes)},
		{"service root announces a huge body", root, announceHuge, Options{}, nil,
			[]error{provisioner.ErrUnreachable}, fmt.Sprintf("connect: the answer to GET %s is larger than the limit of %d bytes", root, DefaultMaxResponseBytes)},
		{"system streams past a small cap", system, streamJSON, Options{MaxResponseBytes: 64 << 10}, register,
			[]error{provisioner.ErrUnreachable}, fmt.Sprintf("register: read system %s: the answer to GET %s is larger than the limit of %d bytes", system, system, 64<<10)},
		{"system streams past the cap while powering on", system, streamJSON, Options{}, powerOn,
			[]error{provisioner.ErrUnreachable}, fmt.Sprintf("the answer to GET %s is larger than the limit of %d bytes", system, DefaultMaxResponseBytes)},
		{"an endless error answer is its status", system, streamError, Options{}, register,
			[]error{provisioner.ErrUnreachable}, "register: read system " + system + ": HTTP 500 Internal Server Error"},
		{"service root never answers", root, hang, Options{HTTPTimeout: 200 * time.Millisecond}, nil,
			[]error{provisioner.ErrUnreachable, context.DeadlineExceeded}, "connect: timed out"},
		{"system never answers", system, hang, Options{HTTPTimeout: 200 * time.Millisecond}, register,
			[]error{provisioner.ErrUnreachable, context.DeadlineExceeded}, "register: read system " + system + ": timed out"},
		{"processors page without end", system + "/Processors", pageForever, Options{MaxRequests: 50}, inspect,
			[]error{provisioner.ErrRefused}, "more than 50 requests for one operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeBMC(t)
			target := hostileBMC(t, f, tt.path, tt.mode)
			// Only a safety net against a test that would never end (a
			// bound that does not hold); the checks are on the error.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			p, err := New(tt.opts).Open(ctx, target)
			if tt.op != nil {
				noErr(t, err)
				err = tt.op(ctx, p)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				errIs(t, err, w)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			if !strings.HasPrefix(err.Error(), "BMC "+target.Access.Endpoint+": ") {
				t.Errorf("%q does not start with the endpoint", err)
			}
			contains(t, err.Error(), tt.msg)
			notContains(t, err.Error(), f.pass)
			notContains(t, err.Error(), "xxxx")
		})
	}
}

// TestBMCTransport: no proxy unless Options.Proxy says so, whatever the
// environment; certificates verified unless InsecureSkipVerify. The
// proxy decision is checked on the transport, for a BMC name that is never
// dialled (net/http never proxies loopback addresses).
func TestBMCTransport(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:3128")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
	t.Setenv("NO_PROXY", "")
	tests := []struct {
		name      string
		opts      Options
		insecure  bool
		wantProxy string
		wantSkip  bool
	}{
		{"defaults: direct, verified", Options{}, false, "", false},
		{"proxy from the environment", Options{Proxy: httplimit.ProxyFromEnvironment()}, false, "http://127.0.0.1:3128", false},
		{"insecure for every target", Options{InsecureSkipVerify: true}, false, "", true},
		{"insecure for one target", Options{}, true, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newTransport(tt.opts.withDefaults(), tt.insecure)
			tr, ok := rt.(requestBudget).next.(errorBodies).next.(interface{ Unwrap() http.RoundTripper })
			if !ok {
				t.Fatalf("transport %T has no Unwrap", rt)
			}
			ht := tr.Unwrap().(*http.Transport)
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://bmc.example.test/redfish/v1/", nil)
			got := ""
			if ht.Proxy != nil {
				u, err := ht.Proxy(req)
				noErr(t, err)
				if u != nil {
					got = u.String()
				}
			}
			eq(t, tt.wantProxy, got, "proxy")
			eq(t, tt.wantSkip, ht.TLSClientConfig.InsecureSkipVerify, "InsecureSkipVerify")
			if ht.ResponseHeaderTimeout <= 0 || ht.TLSHandshakeTimeout <= 0 {
				t.Errorf("transport without timeouts: %+v", ht)
			}
		})
	}
}
