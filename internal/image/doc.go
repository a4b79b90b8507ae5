// Package image builds OCI images of this project's binaries without a
// container runtime, with go-containerregistry: an empty base, one layer of
// base files (CA certificates, /etc/passwd and /etc/group with the non-root
// user 65532, an empty /tmp) and one layer holding the static binary, the
// entrypoint, that user, and OCI labels. Tar entries are sorted and every
// timestamp is fixed, so the same binaries give the same digests. One image
// per platform, gathered in an image index; written as an OCI image layout
// and, per platform, as a tarball `docker load` reads.
package image
