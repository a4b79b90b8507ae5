// Package image builds OCI images of this project's binaries without a
// container runtime, with go-containerregistry: an empty base, one layer of
// base files (CA certificates, /etc/passwd and /etc/group with the non-root
// user 65532, an empty /tmp) and one layer holding the static binary, the
// entrypoint, that user, and OCI labels. Tar entries are sorted and every
// timestamp is fixed, so the same binaries give the same digests. One image
// per platform, gathered in an image index; written as an OCI image layout
// and, per platform, as a tarball `docker load` reads.
//
// Push writes an index to a registry, bounded: the whole push by
// PushOptions.Timeout (10 min), connecting and each answer's wait by
// PushOptions.RequestTimeout (1 min), each answer's body by
// MaxResponseBytes (16 MiB), through the environment's proxy.
package image
