// Package capienv runs the real Cluster API managers for tests: clusterctl
// init through the Clusterctl executor (Init), then the managers as local
// processes (Start, over internal/cluster/capilocal) until the test ends.
//
// Missing binaries skip the test with a message naming `make testbin`, or
// fail it when AIRSHIP_REQUIRE_TESTBIN is set.
package capienv
