// Package armada is the Armada operator, one package per concern:
//
//   - chartsource loads the chart an ArmadaChart's source points at
//     (directories, archives, in-site HTTP chart servers) and its digest;
//   - helm drives the Helm v4 SDK against a rest.Config;
//   - wait implements Armada's wait semantics over jobs, pods and workload
//     controllers;
//   - controller holds the ArmadaChart, ArmadaChartGroup and
//     ArmadaManifest reconcilers built on those;
//   - operator runs them as the armada-operator process;
//   - convert turns Armada's own documents (armada/Chart, ChartGroup,
//     Manifest, v1 and v2) into those objects, for `airshipctl armada` and
//     the Promenade genesis build.
package armada
