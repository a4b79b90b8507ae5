// Package redfish is the Redfish implementation of provisioner.BMCFactory and
// provisioner.BMC, spoken with gofish.
//
// One client is kept per BMC target (endpoint, username, a hash of the
// password, whether TLS is verified), so that reconciling many hosts over and
// over neither logs in again nor opens new connections: requests use HTTP
// basic auth (no Redfish sessions to create, expire or leak) over a transport
// shared by every client. A client whose credentials the BMC refuses is
// dropped, so the next Open after a Secret is fixed connects afresh.
//
// Every request is bounded, for the metal3-operator and airshipctl alike
// (one transport, built on internal/httplimit): Options.HTTPTimeout (30 s)
// covers connecting, the TLS handshake, the answer and reading all of its
// body, and a body over Options.MaxResponseBytes (DefaultMaxResponseBytes,
// 4 MiB) is an error naming the endpoint, the method, the path and the
// limit; of an error answer only its first 64 KiB are read; one operation
// sends at most Options.MaxRequests (2000) requests, so a collection that
// pages without end (Members@odata.nextLink) fails it. Requests use a
// proxy only when Options.Proxy gives one (the operator passes the
// environment's; airshipctl only with managementConfiguration.useproxy),
// and certificates are verified unless the target's InsecureSkipVerify or
// Options.InsecureSkipVerify says not to.
//
// A host's system is the address's path, or the service's only system. The
// virtual CD is the CD/DVD slot of the manager the system is ManagedBy (else
// the only manager). Boot inserts the image by its URL alone (Image,
// Inserted, WriteProtected: no Oem section), sets a one-time boot override
// to Cd and powers the host on or restarts it.
//
// Errors are *Error values that wrap one of the provisioner sentinels
// (ErrCredentials, ErrUnreachable, ErrNoSystem, ErrRefused) and name the
// endpoint and the operation. They are built from status codes and transport
// error kinds only: never from response bodies, so neither a password nor
// user-data can end up in one.
//
// Inspect requires of the system only what the lifecycle needs (a power
// state and the ComputerSystem.Reset action) and fails naming what is
// missing. The rest is inventory: a part the BMC does not link, or links
// but answers with a client error (a dangling Memory link answering 404,
// as sushy-tools' fake driver does) or with JSON that does not fit the
// schema (its libvirt driver's processors), is left empty in the details, and
// Inspect logs through the context's logger which parts are missing and
// why; that line is the only thing this package logs. A server error or no
// answer while reading a part fails the inspection instead, to be tried
// again, rather than leave a host with a partial inventory for good.
package redfish
