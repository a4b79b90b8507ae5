// Package metal3 is the metal3-operator: BareMetalHosts (metal3.io/v1alpha1,
// the upstream types) driven over Redfish by this project's own controller,
// with no Ironic, and the Cluster API infrastructure provider for bare metal
// beside it. Its packages, from the bottom:
//
//   - refs: the namespace rule every reference between objects follows;
//   - provisioner: what is asked of a BMC, with a Redfish implementation in
//     provisioner/redfish (airshipctl's host operations use it too);
//   - baremetalhost: the BareMetalHost state machine;
//   - capi: what the Cluster API provider's reconcilers (capm3, data,
//     ipam) must agree on: the owning Cluster, paused, claim status writes;
//   - capm3: the Metal3Cluster and Metal3Machine controllers;
//   - data: Metal3DataTemplates rendered into meta-data and network-data;
//   - ipam: IPClaims served from IPPools;
//   - operator: the manager cmd/metal3-operator runs.
//
// BMC addresses are parsed by internal/bmc, outside this tree, because
// airshipctl and SIP read them too; airshipctl's host operations
// (`airshipctl baremetal`, the BaremetalManager executor) are
// internal/hostops.
package metal3
