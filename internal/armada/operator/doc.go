// Package operator assembles the Armada operator process: a
// controller-runtime manager with leader election, health and readiness
// probes and a metrics endpoint, running the ArmadaChart, ArmadaChartGroup
// and ArmadaManifest reconcilers. cmd/armada-operator only parses flags and
// calls Run.
package operator
