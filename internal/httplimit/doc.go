// Package httplimit is the project's one place for the bounds of HTTP, on
// both ends of a connection.
//
// Servers: NewServer returns an *http.Server with a header, read, write and
// idle timeout and a header size limit (ServerTimeouts; the zero value means
// the defaults below), so a client that opens a connection and sends nothing,
// or half a header, or stops reading, has it closed. Every listener of every
// binary is built with it: promenade serve, the redfish-emulator and the
// operators' metrics and health probe servers (internal/operatorkit).
//
// Clients: NewClient returns an *http.Client whose every request has a
// deadline (ClientOptions.Timeout covers connecting, sending, waiting and
// reading the whole answer) and whose every response body is capped
// (ClientOptions.MaxResponseBytes): an answer larger than the cap is a
// *TooLargeError naming the server (scheme, host and port only: never user
// information or a query) and the request's method and path. NewTransport is
// the transport under it (connect, TLS handshake and response header
// timeouts) and LimitResponses the cap alone, for clients whose transport
// comes from elsewhere. A client uses a proxy only when ClientOptions.Proxy
// says so; ProxyFromEnvironment reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY
// when it is called (net/http's reads them once per process).
package httplimit
