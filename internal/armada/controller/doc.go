// Package controller holds the Armada operator's controller-runtime
// reconcilers. The ArmadaChart reconciler drives one Helm release to its
// target state with the steps of package armada (load the chart, install or
// upgrade only when the chart or values changed, wait with Armada's
// semantics, test), reports progress as kstatus-compatible Ready,
// Reconciling and Stalled conditions and events, and uninstalls the release
// behind a finalizer when the object is deleted.
//
// Errors carry intent: a stalled error needs a spec change (a missing chart,
// values the chart rejects) and is not retried; any other error is retried
// with the controller's exponential backoff and counted in status.failures.
// Messages are scrubbed of value strings before they reach status, events or
// logs, because values may hold secrets.
package controller
