package redfish

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// Error is what every operation of this package fails with. It names the
// BMC's endpoint and the operation, carries the HTTP status when there was
// one, and wraps one of the provisioner sentinels (and the caller's context
// error when that ended the request). Its text is built here from status
// codes and error kinds, never from a response body or a request.
type Error struct {
	// Endpoint is the BMC's base URL (scheme, host, port).
	Endpoint string
	// Op is what was being done, such as "power on" or "insert media".
	Op string
	// Status is the HTTP status the BMC answered with; 0 when none.
	Status int
	// Detail says what went wrong, in this package's words.
	Detail string

	kind  error // one of the provisioner sentinels
	cause error // context.Canceled or context.DeadlineExceeded, or nil
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "BMC %s: %s: ", e.Endpoint, e.Op)
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d %s: ", e.Status, http.StatusText(e.Status))
	}
	if e.Detail != "" {
		b.WriteString(e.Detail)
		b.WriteString(": ")
	}
	if e.kind != nil {
		b.WriteString(e.kind.Error())
	} else if e.cause != nil {
		b.WriteString(e.cause.Error())
	}
	return b.String()
}

// Unwrap returns the sentinel and, when the caller's context ended the
// request, the context's error.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.kind != nil {
		errs = append(errs, e.kind)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

// newError builds an Error of a kind without an underlying failure (an
// answer this package cannot use, a missing slot).
func newError(endpoint, op string, kind error, format string, args ...any) *Error {
	return &Error{Endpoint: endpoint, Op: op, Detail: fmt.Sprintf(format, args...), kind: kind}
}

// classify turns what gofish or net/http returned into an *Error.
// notFound is the sentinel a 404 means here: provisioner.ErrNoSystem when
// the request was for the host's system, else provisioner.ErrRefused.
func classify(endpoint, op string, err error, notFound error) error {
	if err == nil {
		return nil
	}
	var own *Error
	if errors.As(err, &own) {
		return err
	}
	e := &Error{Endpoint: endpoint, Op: op}

	// gofish collects the failures of a collection's members in a map; any
	// one of them says what the BMC did.
	var coll *schemas.CollectionError
	if errors.As(err, &coll) {
		for _, ferr := range coll.Failures {
			err = ferr
			if errors.As(err, new(*schemas.Error)) {
				break
			}
		}
	}

	var tooMany *errTooManyRequests
	if errors.As(err, &tooMany) {
		e.Detail = tooMany.Error()
		e.kind = provisioner.ErrRefused
		return e
	}
	var tooLarge *httplimit.TooLargeError
	if errors.As(err, &tooLarge) {
		e.Detail = fmt.Sprintf("the answer to %s %s is larger than the limit of %d bytes", tooLarge.Method, tooLarge.Path, tooLarge.Limit)
		e.kind = provisioner.ErrUnreachable
		return e
	}

	var re *schemas.Error
	if errors.As(err, &re) && re.HTTPReturnedStatusCode != 0 {
		e.Status = re.HTTPReturnedStatusCode
		switch {
		case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
			e.kind = provisioner.ErrCredentials
		case e.Status == http.StatusNotFound:
			e.kind = notFound
		case e.Status >= 500:
			e.kind = provisioner.ErrUnreachable
		case e.Status >= 400:
			e.kind = provisioner.ErrRefused
		default:
			e.Detail = "unexpected answer"
			e.kind = provisioner.ErrUnreachable
		}
		return e
	}

	switch {
	case errors.Is(err, context.Canceled):
		e.Detail = "canceled"
		e.cause = context.Canceled
		return e
	case errors.Is(err, context.DeadlineExceeded):
		e.Detail = "timed out"
		e.kind = provisioner.ErrUnreachable
		e.cause = context.DeadlineExceeded
		return e
	}

	e.kind = provisioner.ErrUnreachable
	e.Detail = transportDetail(err)
	return e
}

// transportDetail describes a failure below HTTP without quoting anything
// the BMC sent.
func transportDetail(err error) string {
	var (
		ne       net.Error
		dnsErr   *net.DNSError
		opErr    *net.OpError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		syntax   *json.SyntaxError
		typeErr  *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid), errors.As(err, &verify):
		return "its TLS certificate is not trusted (spec.bmc.disableCertificateVerification skips the check)"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection closed without an answer"
	case errors.As(err, &dnsErr):
		return "cannot resolve " + dnsErr.Name
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.As(err, &opErr):
		if opErr.Op == "dial" {
			return "cannot connect: " + syscallText(opErr)
		}
		return "the connection failed: " + syscallText(opErr)
	case errors.As(err, &syntax), errors.As(err, &typeErr):
		return "the answer is not the Redfish JSON expected"
	default:
		return "the request failed"
	}
}

// syscallText is the innermost error of a network operation, such as
// "connection refused": it holds no data the peer sent.
func syscallText(opErr *net.OpError) string {
	inner := opErr.Err
	for {
		next := errors.Unwrap(inner)
		if next == nil {
			break
		}
		inner = next
	}
	return inner.Error()
}

// credentialsRefused reports whether err says the BMC refused the credentials.
func credentialsRefused(err error) bool {
	return errors.Is(err, provisioner.ErrCredentials)
}
