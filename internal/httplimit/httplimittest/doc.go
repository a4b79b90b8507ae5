// Package httplimittest helps test listeners built with httplimit.NewServer
// and clients that must survive a bad peer: Serve runs a server on a
// loopback port for a test, ExpectClosed checks that the server closes a
// connection that sends nothing, half a request or nothing more after one,
// and Hang is a peer that accepts connections and never answers.
package httplimittest
