// Package sopstest makes the PGP and age keys tests encrypt and decrypt
// SOPS documents with: generated per test, never committed.
package sopstest
