// Package pki issues X.509 certificate authorities, certificates and keys with
// crypto/x509 and writes them as PEM files with safe permissions.
//
// It is the small common core that the local control plane uses for its
// loopback TLS and that site PKI generation builds on: no shelling out to
// openssl or cfssl.
package pki
