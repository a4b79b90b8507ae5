// Package haproxy builds the image of HAProxy that SIP's load balancers
// run, localhost/airship/haproxy:latest, from the Debian package installed
// on this machine (hack/setup.sh installs it) rather than from a registry:
// /usr/sbin/haproxy, its ELF interpreter and the shared libraries it needs,
// found by following DT_NEEDED recursively through the dynamic loader's
// default directories, each copied to the path it was found at with
// symlinks resolved to the file. So the image holds this machine's
// platform only.
//
// The image runs as uid and gid 99 (haproxy in /etc/passwd and
// /etc/group, as in the official image SIP was written for) with the
// entrypoint /usr/sbin/haproxy -W -db -f /usr/local/etc/haproxy/haproxy.cfg:
// master-worker in the foreground, no pid file and no socket, so a
// read-only root file system, no capabilities and no command suffice. It is
// labelled with the package's version (org.opencontainers.image.version)
// and name.
package haproxy
