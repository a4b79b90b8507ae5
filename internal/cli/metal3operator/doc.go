// Package metal3operator is the command line of cmd/metal3-operator: the
// shared operator flags of internal/cli/operatorcmd plus the BareMetalHost
// controller's own.
package metal3operator
