// Package operatorkit is what every operator of the project shares.
// armada-operator, metal3-operator and sip-operator use it; a new operator
// does too.
//
// The process (operatorkit.go): an operator is an Operator value — its
// kinds (AddToScheme), the CRDs it waits for (Kinds), the reconcilers it
// registers (Reconcilers) and the manager settings every operator has
// (Options: metrics, probes, leader election, client rate, bound as flags
// by Options.BindFlags). Operator.Run is the one assembly: check the
// options, wait until the API server serves the CRDs (an operator started
// before the phase that installs them waits instead of exiting), build the
// scheme and the manager (NewManager), register the reconcilers, start.
// Operator.NewManager is the same without the wait and the start, for
// tests. Each operator package holds its Options, the function from them
// to its Operator, and Run and NewManager that call it.
//
// An operator whose parts need different CRDs lists them as Controllers
// (controllers.go) instead: Run starts the manager at once and registers
// each controller on it when the API server serves that controller's own
// kinds, logging "controller X waits for CRDs" once (with the kinds
// missing) and "controller X started". Armada's and SIP's operators wait
// for all their kinds before anything starts (Kinds); Metal3's runs its
// BareMetalHost controller on a site without Cluster API's CRDs.
//
// NewManager sets controller-runtime's SkipNameValidation for the whole
// manager from Options.SkipControllerNameValidation (tests that start
// several managers in one process set it), so no reconciler takes a
// setting of its own for it. It also turns off controller-runtime's
// priority queue (its default): that queue gives the objects of the
// informer's first list a low priority their requeues keep, so while
// other objects are requeued (polled hosts) they are never reconciled.
// Every controller's queue is first in, first out.
//
// The metrics server (/metrics, no authentication, --metrics-bind-address,
// default :8080) and the probe server (/healthz, /readyz,
// --health-probe-bind-address, default :8081) are this package's own,
// built with httplimit.NewServer instead of controller-runtime's (which
// bound only the header and idle time): a header within 10 s, a request
// within 60 s, an answer within 120 s, an idle connection closed after
// 120 s (Options.ServerTimeouts). Their checks are the ones NewManager
// sets ("ping"; "caches"): checks added to the manager with
// AddHealthzCheck or AddReadyzCheck are not served. While an operator
// waits for CRDs and nothing reconciles (its Kinds, or none of its
// Controllers registered yet) /healthz answers 200 and /readyz 503 with
// what it waits for; once one controller is registered the process
// serves and /readyz is the caches' check, though other controllers may
// still wait (the log says which).
//
// An operator whose CRDs have more than one version sets
// Operator.Conversion (conversion.go): a conversion webhook served from the
// start on every replica (TLS, POST /convert, through each kind's
// conversion hub on the operator's scheme), which keeps those CRDs'
// spec.conversion pointing at it (its Service or URL, and the CA of its
// certificate: a mounted directory's, one kept in a Secret the replicas
// share, or one made at start), watching them so that one applied again
// is set back at once. ConversionWebhook.AddToManager serves it from a
// manager built elsewhere (a test's); ConversionPending says which CRD
// does not point at a URL's webhook yet.
//
// The reconcile kit (the other files): how a pass ends (WaitingError,
// StalledError, FailedError, sorted by OutcomeOf), its one status write
// (StatusSnapshot, Settle), the kstatus conditions (Conditions), events on
// transitions (Events), finalizer helpers and retry Backoff.
package operatorkit
