// Package operatortest holds the checks the tests of the three operators
// (internal/armada/armadaoperator, internal/metal3/metal3operator, internal/sip/sipoperator)
// make alike: their options' Validate, and that an operator running as
// its ServiceAccount holds its leader Lease and answers its probes. Each
// operator keeps its own cases; the check is written once, so the three
// cannot drift apart in what they accept as a pass.
package operatortest
