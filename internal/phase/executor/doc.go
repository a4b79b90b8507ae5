// Package executor defines what an executor is (Run, Render, Validate,
// Status) and the registry that maps an executor document's
// group/version/kind to the code that runs it.
package executor
