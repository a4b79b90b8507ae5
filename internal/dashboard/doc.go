// Package dashboard is the site dashboard `airshipctl dashboard` serves: a
// web view of the whole site that stays live while it deploys.
//
// The server watches every cluster of the ClusterMap it can reach with one
// informer per kind it shows (BareMetalHosts, Machines, Nodes, Armada
// manifests, groups and charts, SIPClusters, Events), keeping only the
// fields its pages show (compact.go), and picks up kinds a phase installs
// later. A phase's state comes from its executor's Status, read for every
// phase at start, every 30 seconds, when a cluster becomes reachable and
// when a run ends, and from the runs started here (runs.go), which are
// kept in a run log.
//
// The browser reads one JSON document per page (model.go) and an event
// stream (GET /api/events, server-sent events): "change" names the topics
// that changed, coalesced over 200 ms, and the page reads its document
// again; "runevent" carries a run's progress lines. Nothing polls objects.
//
// The front end is plain JavaScript, HTML and CSS in web/, embedded in the
// binary (embed): no build step and no network at run time. Its pages are
// served with a Content-Security-Policy of 'self' only; every value from
// a cluster is set as text.
//
// Security: without a token the server answers only requests addressed
// to an IP address or localhost (no DNS rebinding) and is meant for
// loopback; with one, every request carries it as a bearer token or the
// session cookie POST /login sets (an HMAC of the token, HttpOnly,
// SameSite Strict). Actions (run a phase or plan; power a host on or off,
// reboot or inspect it through Metal3's annotations) need
// Options.AllowActions, a JSON body and this server's origin, and are
// recorded in the audit log (0600), refusals included. Rendered Secrets
// show their keys with REDACTED values; URLs in messages lose their
// credentials.
package dashboard
