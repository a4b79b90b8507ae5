// Package image builds OCI images of this project's binaries without a
// container runtime, with go-containerregistry: an empty base, one layer of
// base files (CA certificates, /etc/passwd and /etc/group with the non-root
// user, 65532 by default, an empty /tmp) and one layer holding the static
// binary, the entrypoint, that user, and OCI labels. Tar entries are sorted and every
// timestamp is fixed, so the same binaries give the same digests. One image
// per platform, gathered in an image index; written as an OCI image layout
// and, per platform, as a tarball `docker load` reads. Spec can place the
// binary elsewhere, run it as another user with another entrypoint, add
// files (a dynamic binary's libraries, see the haproxy subpackage) and
// labels.
//
// WriteArchive writes an index as an OCI archive for `ctr images import`
// (containerd v2): a tar of an OCI image layout (oci-layout, index.json,
// blobs/sha256/<hex>) whose index.json lists the image index once per
// name, each entry annotated with that name as both
// org.opencontainers.image.ref.name and io.containerd.image.name. ctr
// names the imported images from those annotations (io.containerd.image.name
// first). Without --base-name (or with --base-name
// localhost/airship/<name>) ctr keeps a full reference such as RefName's
// localhost/airship/<name>:latest as it is; with another --base-name it
// drops it.
//
// Push writes an index to a registry, bounded: the whole push by
// PushOptions.Timeout (10 min), connecting and each answer's wait by
// PushOptions.RequestTimeout (1 min), each answer's body by
// MaxResponseBytes (16 MiB), through the environment's proxy.
package image
