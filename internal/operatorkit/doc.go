// Package operatorkit is what every operator of the project shares: the
// flags of a controller-runtime manager (metrics, probes, leader election,
// client rate), building that manager with its health and readiness checks,
// and waiting for the operator's CRDs to be served. armada-operator,
// metal3-operator and sip-operator use it; a new operator does too.
//
// The metrics server (/metrics, no authentication, --metrics-bind-address,
// default :8080) and the probe server (/healthz, /readyz,
// --health-probe-bind-address, default :8081) are this package's own,
// built with httplimit.NewServer instead of controller-runtime's (which
// bound only the header and idle time): a header within 10 s, a request
// within 60 s, an answer within 120 s, an idle connection closed after
// 120 s (Options.ServerTimeouts). Their checks are the ones NewManager
// sets ("ping"; "caches"): checks added to the manager with
// AddHealthzCheck or AddReadyzCheck are not served.
package operatorkit
