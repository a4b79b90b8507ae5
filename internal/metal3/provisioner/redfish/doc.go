// Package redfish is the Redfish implementation of provisioner.Factory and
// provisioner.Provisioner, spoken with gofish.
//
// One client is kept per BMC target (endpoint, username, a hash of the
// password, whether TLS is verified), so that reconciling many hosts over and
// over neither logs in again nor opens new connections: requests use HTTP
// basic auth (no Redfish sessions to create, expire or leak) over a transport
// shared by every client. A client whose credentials the BMC refuses is
// dropped, so the next Open after a Secret is fixed connects afresh.
//
// A host's system is the address's path, or the service's only system. The
// virtual CD is the CD/DVD slot of the manager the system is ManagedBy (else
// the only manager). Boot inserts the image with an "Oem": {"Airship": ...}
// section carrying the checksum, format, user-data, network-data and
// meta-data (the emulator reads it; real BMCs ignore it), sets a one-time
// boot override to Cd and powers the host on or restarts it.
//
// Errors are *Error values that wrap one of the provisioner sentinels
// (ErrCredentials, ErrUnreachable, ErrNoSystem, ErrRefused) and name the
// endpoint and the operation. They are built from status codes and transport
// error kinds only: never from response bodies, so neither a password nor
// user-data can end up in one. Nothing here logs.
package redfish
