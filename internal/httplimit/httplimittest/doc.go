// Package httplimittest helps test listeners built with httplimit.NewServer:
// Serve runs a server on a loopback port for a test, and ExpectClosed checks
// that the server closes a connection that sends nothing, half a request or
// nothing more after one.
package httplimittest
