// Package e2e runs airshipctl as a user would, as a built binary against the
// local control plane, behind the e2e build tag:
//
//	go test -tags e2e ./test/e2e/...
//
// make test runs it after the unit and integration tests.
package e2e
