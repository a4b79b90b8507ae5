// Package testtool finds the system tools and binaries a test needs
// (shellcheck, openssl, kubectl, go, ...) and decides what happens when one
// is missing: the test skips on a developer's machine, and fails when
// AIRSHIP_REQUIRE_TESTBIN is set, as `make test` and CI set it, so a missing
// tool can never turn a check into a silent skip there. GitHTTPServer
// serves test repositories over git's smart HTTP protocol with the git tool.
//
// It imports nothing from the project, so any package's tests can use it.
package testtool
