// Package sops reads and writes SOPS-encrypted YAML documents (the format
// of github.com/getsops/sops/v3, version 3) with PGP and age keys, in
// process and without a network.
//
// The format: every leaf value a document's encryption rules select is
// replaced by ENC[AES256_GCM,data:…,iv:…,tag:…,type:…], AES-256-GCM under
// a random 32-byte data key with the value's path (keys joined by ":", plus
// a trailing ":") as additional data; a top-level "sops" mapping holds the
// data key wrapped for each PGP key and age recipient, the rules
// (unencrypted_suffix, encrypted_suffix, unencrypted_regex,
// encrypted_regex, mac_only_encrypted), the time of the last change and a
// MAC: SHA-512 over the plaintext leaves in document order, itself
// encrypted with the data key and the time as additional data. Comments
// in encrypted places are encrypted too (type:comment) and take no part in
// the MAC.
//
// Why not the getsops packages themselves: the tree, cipher and store
// packages all import the root package, which imports the key service and
// with it every cloud KMS client (AWS, GCP, Azure, Vault, Huawei) and an
// SQL driver: about 370 more packages in airshipctl. This package
// implements the same format over go.yaml.in/yaml/v3 nodes (so a
// kustomize document keeps its field order and styles), wraps data keys
// with github.com/ProtonMail/go-crypto (PGP) and filippo.io/age (age), and
// uses getsops' own shamir package for files whose data key is split over
// several key groups. Tests check compatibility both ways against files
// shaped like sops 3.7 and 3.13 output.
//
// Keys live only in memory in a Keyring: PGP keys (armored, public or
// private, several per text) and age identities are imported from
// SOPS_IMPORT_PGP, SOPS_IMPORT_AGE, SOPS_AGE_KEY and SOPS_AGE_KEY_FILE, or
// given directly. No gpg program, GNUPGHOME, agent or keyserver is used;
// cloud KMS entries in a file are reported, not contacted.
//
// No error of this package carries a decrypted value, a data key or a
// private key: errors name the document, the path of a value and the keys
// (by fingerprint or recipient) that were tried.
package sops
