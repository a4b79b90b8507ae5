// Package executor defines what an executor is (Run, Render, Validate,
// Status) and the registry that maps an executor document's
// group/version/kind to the code that runs it. The executors themselves
// live in internal/phase/executors, whose Register fills the registry with
// all of them; they import this package, so it cannot list them.
package executor
