// Package operator assembles the Armada operator process: a
// controller-runtime manager with leader election, health and readiness
// probes and a metrics endpoint, running the ArmadaChart, ArmadaChartGroup
// and ArmadaManifest reconcilers. cmd/armada-operator only parses flags and
// calls Run. Options bound what the operator fetches: --chart-fetch-timeout
// (one chart archive fetch) and --chart-fetches (fetches in flight).
package operator
