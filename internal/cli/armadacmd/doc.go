// Package armadacmd implements `airshipctl armada`, the commands for Armada
// documents: `armada convert FILE...` prints the ArmadaChart,
// ArmadaChartGroup and ArmadaManifest objects equivalent to Armada's own
// armada/Chart, armada/ChartGroup and armada/Manifest documents.
package armadacmd
