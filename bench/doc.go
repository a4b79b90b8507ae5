// Package bench holds benchmarks that compare airshipctl with the tools a
// user would otherwise run (kubectl, kubectl kustomize, the Helm CLI), in
// the same run, and report the ratio. Run them with
//
//	go test ./bench/... -run '^$' -bench . -benchtime 1x
//
// Nothing here asserts a time: the figures go into the closing notes.
package bench
