// Package armadaoperator is the Armada operator process as an
// operatorkit.Operator: the ArmadaChart, ArmadaChartGroup and
// ArmadaManifest reconcilers, sharing one Helm client and event recorder,
// after the three CRDs are served; the manager (leader election, probes,
// metrics) is operatorkit's. Options add the operator's own flags to
// operatorkit's: reconcile concurrency, poll interval, where charts on
// disk are read (--chart-root, --chart-mount), and what the operator
// fetches: --chart-fetch-timeout (one chart archive fetch) and
// --chart-fetches (fetches in flight). cmd/armada-operator (through
// internal/cli/armadaoperatorcmd) only parses flags and calls Run.
package armadaoperator
