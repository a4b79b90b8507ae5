// Package phase is the phase engine: it loads a site's phase bundle
// (phases, executor documents, plans, the cluster map), resolves a phase to
// its executor and executor bundle, and validates phases and plans.
//
// Executors live in their own packages and register themselves, keyed by
// the GVK of their executor document, in package executor's registry.
package phase
