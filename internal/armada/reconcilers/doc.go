// Package reconcilers holds the Armada operator's controller-runtime
// reconcilers. The ArmadaChart reconciler drives one Helm release to its
// target state with the steps of package armada (load the chart, install or
// upgrade only when the chart or values changed, wait with Armada's
// semantics, test), reports progress as kstatus-compatible Ready,
// Reconciling and Stalled conditions and events, and uninstalls the release
// behind a finalizer when the object is deleted.
//
// Which Helm action a pass takes (install, reinstall, upgrade, heal, or
// none) is chosen by a pure function, nextAction (armadachart_action.go),
// from what the pass observed: the chart's spec and status, the release's
// last record, and its drift. Each action runs in a small function of its
// own (armadachart_install.go, armadachart_upgrade.go); a revision that
// fails is rolled back, left (spec.protected) or reinstalled next time as
// remedyFor chooses (armadachart_remediate.go).
//
// The ArmadaChartGroup and ArmadaManifest reconcilers are thin: both run one
// shared pass over their members (members.go) that reads them in order,
// becomes their controller, passes annotations down, enables them in order
// and summarises. Enabling a member writes the owner's target into the
// member's TargetStateAnnotation, never into its spec, so the site's
// documents stay what the cluster holds and re-applying them shows no drift.
//
// A pass reads little: its chart from the cache, unless this process wrote
// the chart last and the cache does not hold that write yet (then from
// the API server);
// Helm's history not at all for a chart whose status knows of no revision
// (Helm's install reads it, and refuses a name in use, changing nothing:
// then the pass reads it and chooses again); and the workloads an install
// or upgrade applied from the API server's answers to it (helm.Applied),
// reading back only those the action did not record (a rollback's).
//
// No reconcile waits on a remote server: a chart (or dependency) archive
// served over HTTP(S) is fetched by the Loader's Fetcher in the background.
// While it is fetched the chart reports Reconciling with reason
// FetchingSource and its reconcile returns; the Fetcher's notification comes
// back through a channel source (source.Channel) and enqueues the chart
// again. A fetch that fails or times out is retried with the chart's backoff
// (reason SourceFetchFailed), naming source.location without credentials.
//
// Errors carry intent, as the operators' shared kit (package operatorkit)
// sorts them: a stalled error needs a spec change (a missing chart, values
// the chart rejects) and is not retried; a waiting one (workloads not ready,
// an archive being fetched) is looked at again; any other error is retried
// with the chart's exponential backoff and counted in status.failures (a
// group's or manifest's, with the work queue's backoff).
// Conditions, events, the finalizer and the one status patch per pass are
// the kit's too. Messages are scrubbed of value strings (scrub.go) before
// they reach status, events or logs, because values may hold secrets.
package reconcilers
