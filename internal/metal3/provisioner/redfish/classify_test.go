package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// classify reads status codes and error kinds only: a body quoting the
// password never reaches the message.
func TestClassify(t *testing.T) {
	const secret = "pa55-in-a-body"
	body := []byte(`{"error":{"message":"bad password ` + secret + `"}}`)
	status := func(code int) error { return schemas.ConstructError(code, body) }
	urlErr := func(err error) error { return &url.Error{Op: "Get", URL: "http://bmc/redfish/v1/", Err: err} }
	refused := urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})
	coll := schemas.NewCollectionError()
	coll.Failures["/redfish/v1/Systems/1/Processors/1"] = status(503)
	var syntax *json.SyntaxError
	syntaxErr := json.Unmarshal([]byte("{"+secret), &struct{}{})
	if !errors.As(syntaxErr, &syntax) {
		t.Fatalf("not a syntax error: %v", syntaxErr)
	}
	tests := []struct {
		name     string
		err      error
		notFound error
		want     []error
		msg      string
	}{
		{"401", status(401), provisioner.ErrNoSystem, []error{provisioner.ErrCredentials}, "op: HTTP 401 Unauthorized: the BMC refused the credentials"},
		{"403", status(403), provisioner.ErrRefused, []error{provisioner.ErrCredentials}, "op: HTTP 403 Forbidden: the BMC refused the credentials"},
		{"404 of the system", status(404), provisioner.ErrNoSystem, []error{provisioner.ErrNoSystem}, "op: HTTP 404 Not Found: the BMC has no such system"},
		{"404 of anything else", status(404), provisioner.ErrRefused, []error{provisioner.ErrRefused}, "op: HTTP 404 Not Found: the BMC refused the request"},
		{"400", status(400), provisioner.ErrNoSystem, []error{provisioner.ErrRefused}, "op: HTTP 400 Bad Request: the BMC refused the request"},
		{"412", status(412), provisioner.ErrNoSystem, []error{provisioner.ErrRefused}, "op: HTTP 412 Precondition Failed: the BMC refused the request"},
		{"500", status(500), provisioner.ErrNoSystem, []error{provisioner.ErrUnreachable}, "op: HTTP 500 Internal Server Error: the BMC is unreachable"},
		{"503", status(503), provisioner.ErrNoSystem, []error{provisioner.ErrUnreachable}, "op: HTTP 503 Service Unavailable: the BMC is unreachable"},
		{"302", status(302), provisioner.ErrNoSystem, []error{provisioner.ErrUnreachable}, "op: HTTP 302 Found: unexpected answer: the BMC is unreachable"},
		{"wrapped status", fmt.Errorf("system resource: %w", status(401)), provisioner.ErrNoSystem, []error{provisioner.ErrCredentials}, "op: HTTP 401 Unauthorized: the BMC refused the credentials"},
		{"a member of a collection", coll, provisioner.ErrRefused, []error{provisioner.ErrUnreachable}, "op: HTTP 503 Service Unavailable: the BMC is unreachable"},
		{"connection refused", refused, provisioner.ErrNoSystem, []error{provisioner.ErrUnreachable}, "op: cannot connect: connection refused: the BMC is unreachable"},
		{"reset", urlErr(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), nil, []error{provisioner.ErrUnreachable}, "op: the connection failed: connection reset by peer: the BMC is unreachable"},
		{"closed without an answer", urlErr(io.EOF), nil, []error{provisioner.ErrUnreachable}, "op: the connection closed without an answer: the BMC is unreachable"},
		{"no such host", urlErr(&net.DNSError{Err: "no such host", Name: "bmc-1.example", IsNotFound: true}), nil, []error{provisioner.ErrUnreachable}, "op: cannot resolve bmc-1.example: the BMC is unreachable"},
		{"deadline", urlErr(context.DeadlineExceeded), nil, []error{provisioner.ErrUnreachable, context.DeadlineExceeded}, "op: timed out: the BMC is unreachable"},
		{"canceled", urlErr(context.Canceled), nil, []error{context.Canceled}, "op: canceled: context canceled"},
		{"not JSON", syntaxErr, nil, []error{provisioner.ErrUnreachable}, "op: the answer is not the Redfish JSON expected: the BMC is unreachable"},
		{"anything else", errors.New("odd " + secret), nil, []error{provisioner.ErrUnreachable}, "op: the request failed: the BMC is unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := classify("https://bmc.example:8443", "op", tt.err, tt.notFound)
			for _, w := range tt.want {
				errIs(t, err, w)
			}
			for _, other := range []error{provisioner.ErrCredentials, provisioner.ErrUnreachable, provisioner.ErrNoSystem, provisioner.ErrRefused} {
				if !errors.Is(tt.want[0], other) {
					notErrIs(t, err, other)
				}
			}
			eq(t, "BMC https://bmc.example:8443: "+tt.msg, err.Error())
			notContains(t, err.Error(), secret)
		})
	}
	if classify("e", "op", nil, nil) != nil {
		t.Error("classify(nil) is not nil")
	}
	already := newError("e", "first op", provisioner.ErrRefused, "detail")
	if got := classify("e", "second op", fmt.Errorf("wrapped: %w", already), nil); !errors.Is(got, already) {
		t.Errorf("an *Error is kept as it is: %v", got)
	}
}
