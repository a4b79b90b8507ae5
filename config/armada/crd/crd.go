// Package crd holds the generated Armada CustomResourceDefinitions, so
// that tools which install them (genesis.sh's bootstrap Armada) carry the
// one copy controller-gen writes.
package crd

import "embed"

// Bases holds bases/*.yaml, the CRDs of armada.airshipit.org.
//
//go:embed bases/*.yaml
var Bases embed.FS
