package emulator

import (
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/httplimit/httplimittest"
)

// TestStartClosesIdleConnections: Start's server closes a connection that
// sends nothing, half a header, half a body or nothing after a request
// (the server had only a header timeout before).
func TestStartClosesIdleConnections(t *testing.T) {
	_, base := start(t, Config{Hosts: Generate(1, 1)}, Options{Timeouts: httplimit.ServerTimeouts{
		ReadHeader: 200 * time.Millisecond, Read: 400 * time.Millisecond, Idle: 200 * time.Millisecond,
	}})
	addr := strings.TrimPrefix(base, "http://")
	tests := []struct {
		name, send string
	}{
		{"nothing sent", ""},
		{"half a header", "GET /redfish/v1/ HTTP/1.1\r\nHost: " + addr + "\r\nX-Slow: "},
		{"half a body", "POST /redfish/v1/SessionService/Sessions HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 100\r\n\r\n{\"User"},
		{"idle after a request", "GET /redfish/v1/ HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			httplimittest.ExpectClosed(t, addr, tt.send)
		})
	}
}
