// Package emulator is a Redfish BMC emulator: N virtual hosts served over
// real Redfish HTTP(S), for the BareMetalHost controller and its tests
// (driven with gofish) where there is no hardware.
//
// # Resources
//
// One service serves every host; a host's BMC address is its system's URL
// (Address). Per host <h>:
//
//	/redfish/v1/Systems/<h>                           ComputerSystem: HostName (the host's name), PowerState, Boot, ProcessorSummary,
//	                                                  MemorySummary, UUID, SerialNumber, BiosVersion; PATCH Boot
//	/redfish/v1/Systems/<h>/Actions/ComputerSystem.Reset   On, ForceOff, GracefulShutdown, ForceRestart, GracefulRestart
//	/redfish/v1/Systems/<h>/{Processors,Memory,EthernetInterfaces,Storage,SimpleStorage,Bios}
//	/redfish/v1/Managers/<h>                          the host's BMC
//	/redfish/v1/Managers/<h>/VirtualMedia/Cd          InsertMedia, EjectMedia
//
// plus the service root, the Systems and Managers collections (the hosts
// the client's credentials open) and the SessionService. The inventory is
// derived from the Config only, so two servers of one config agree: one
// processor (CPU0) with Host.CPUs cores of one thread each
// (ProcessorSummary: Count 1, CoreCount and LogicalProcessorCount CPUs),
// one DIMM, one storage subsystem "1" with the host's disks as Drives.
//
// # Authentication
//
// Everything but the service root and POST .../SessionService/Sessions
// needs basic credentials or the X-Auth-Token of a session. A host's
// resources need the host's credentials (Host.Username and Password, else
// the Config's). Passwords, tokens and user-data are never logged nor
// quoted in errors; an image URL is logged without user information or
// query, and the agent logs neither its token nor a config drive.
//
// # Power and boot
//
// Writable: Boot.BootSourceOverrideTarget (None, Pxe, Cd, Hdd),
// BootSourceOverrideEnabled (Disabled, Once, Continuous) and
// BootSourceOverrideMode (UEFI, Legacy); other properties are refused
// with 400, annotations (names with "@") ignored. Resets other than the
// five are refused with 400. A power-on consumes a Once override.
//
// A host powered on with media inserted boots it, whatever the override;
// without media it boots from disk (see Disks); an override to Pxe or to
// an empty CD boots nothing. Booting takes Config.BootDelay, after which
// HostState.Booted is true.
//
// InsertMedia records Image, Inserted, WriteProtected and TransferMethod
// and answers 409 while media is inserted (eject first). An Oem section,
// whatever its vendors and content, is accepted and ignored, as a BMC
// ignores vendor sections it does not know: nothing but the image's URL
// reaches a host.
//
// # Disks and the deploy agent
//
// Host h's disk d is the file <state>/<h>/<d>.img (Options.StateDir, by
// default a directory made under os.TempDir and removed by Close; see
// DiskPath), sparse, of the inventory's size, made when first written:
// hosts cost no disk block until then. The Storage and SimpleStorage
// resources describe the disks as before.
//
// Inserted media (an http or https URL) is fetched at once (a bounded
// client: 30 s, 64 MiB; one fetch per URL every 30 s for all hosts, a
// failed one not remembered), and a host booting it waits for the fetch.
// When it is an ISO 9660 image
// whose boot configuration (boot/grub/grub.cfg, EFI/BOOT/grub.cfg or
// isolinux/isolinux.cfg, names of any case) holds the kernel parameter
// ipa-api-url=URL among its space-separated tokens, it is a deploy ISO: a
// host booting it runs a deploy agent
// (package ipaagent) speaking IPA's protocol to the Ironic at URL, with the
// host's MACs and disk files, until the host powers off or restarts
// (HostState.Agent is its URL). The agents share one client of Ironic's
// API (Options.AgentClient), patient by default (5 minutes a call): Ironic
// hands a node's agent token out to its first lookup only, so an agent
// that gave up on a slow answer would be left without it. The agent writes images and config drives
// to the disk files and erases them as Ironic's deploy and cleaning steps
// ask, and powers the host off when Ironic tells it to. Booting a deploy
// ISO registers no Node.
//
// Any other media is a live ISO: the host boots it (BootedFrom Cd). A live
// ISO carries its own configuration; the emulator reads it only when the
// ISO is itself a config drive (ISO 9660 labelled config-2, holding
// openstack/latest/meta_data.json, as package configdrive reads and
// builds), and the host then registers its Node from it as from a disk's
// (see Nodes). A live ISO that is no config drive (or media that could
// not be fetched) boots with no Node.
//
// A host booting from disk reads the first disk, in the inventory's order,
// holding a config drive (an ISO 9660 config-2 filesystem on the disk or
// in a partition of its GPT or MBR table, package configdrive):
// openstack/latest/meta_data.json is the meta-data, user_data the
// user-data, and the host registers its Node from them as below
// (HostState.NodeDisk names the disk). A host whose disks hold none boots
// nothing.
//
// # Nodes
//
// A host that boots from a config drive (a disk's, or a live ISO that is
// one) registers a Node, as cloud-init, kubeadm and the kubelet would from
// its user-data and meta-data (JSON, or YAML):
//
//   - name: kubeadm's nodeRegistration.name (or the kubelet's
//     hostname-override), else the meta-data's local-hostname (or
//     local_hostname, hostname, then name),
//     lower-cased, else the host's name;
//   - spec.providerID: the kubelet's provider-id, else the meta-data's
//     providerid (or provider-id, providerID); often none, and then the Cluster API
//     infrastructure provider sets it later (finding the Node by its
//     metal3.io/uuid label): the emulator never clears a providerID, and
//     replaces a Node whose providerID differs only when it wants one;
//   - labels: the kubelet's node-labels, then the meta-data's labels;
//   - annotations kwok.x-k8s.io/node=fake (kwok then marks it Ready) and
//     the host's name;
//   - addresses: the kubelet's node-ip (else the first NIC's IP) as
//     InternalIP, the name as Hostname.
//
// The user-data is read when it is a #cloud-config (as Cluster API's
// kubeadm bootstrap provider writes, after its "## template: jinja"
// line): cloud-init's {{ ds.meta_data.<key> }} references are replaced by
// the meta-data's values in its text (with or without spaces; also
// ds.meta_data['key'], and a key with hyphens under its name with
// underscores; a reference inside a base64 file stays, as in cloud-init),
// then write_files (encodings b64, base64, gz, gzip and
// their +base64/+b64 forms; append) gives kubeadm's configuration — the
// --config of the kubeadm command in runcmd, else /run/kubeadm/kubeadm.yaml
// (ClusterConfiguration and InitConfiguration, kubeadm init) or
// /run/kubeadm/kubeadm-join-config.yaml (JoinConfiguration, kubeadm
// join), of kubeadm v1beta3 (kubeletExtraArgs a map) or v1beta4 (a list of
// name and value) — and the cluster CA, <certificatesDir>/ca.crt and
// ca.key. Ignition and scripts are not read.
//
// The Node goes to the cluster the kubeadm configuration names:
// ClusterConfiguration.controlPlaneEndpoint (else InitConfiguration's
// localAPIEndpoint) for kubeadm init, JoinConfiguration's
// discovery.bootstrapToken.apiServerEndpoint for kubeadm join, as
// https://host:port (port 6443 when none is given). When the user-data
// carries the cluster CA's certificate and key (a control-plane host's),
// the emulator issues itself a client certificate from that CA with the
// group system:masters, trusts that CA for the server, and keeps those
// credentials for the endpoint: a later host whose user-data carries only
// a bootstrap token and the endpoint (a worker) joins through them. The
// emulator does not emulate the kubelet's TLS bootstrap, so a bootstrap
// token alone gives no credentials. One client per endpoint is built, on
// first use, and kept (a CA other than the one known for the endpoint
// replaces it). Otherwise — no user-data, not a cloud-config, unreadable,
// no endpoint, or no credentials for it — the Node goes to the target
// cluster (Options.Target or TargetConfig); without one the host boots
// but gets no Node. The log names each boot's cluster and, when the
// user-data named none the emulator can use, why, never quoting the
// user-data (it holds the CA key and the token). HostState.NodeCluster
// tells where the Node is.
//
// A kubeadm init also does what kubeadm's upload-config phase does: once
// the Node is registered, the user-data's ClusterConfiguration goes to
// kube-system/kubeadm-config (key ClusterConfiguration) in that cluster,
// where Cluster API's KubeadmControlPlane looks to know that the control
// plane is initialized. A ConfigMap already there is left as it is (that
// controller updates it). Nothing else of kubeadm's (certificates, static
// Pods, etcd, RBAC, the kubelet-config ConfigMap) is emulated.
//
// Powering the host off removes the kwok annotation and sets the Ready
// condition False with reason PoweredOff; booting it again (from the live
// ISO, or from disk) hands the Node back to kwok. Both happen in the
// cluster the Node was made in. A boot that registers a Node under
// another name or in another cluster deletes the earlier one.
//
// The Node of a disk's config drive is deleted (in its cluster) when the
// deploy agent erases or overwrites that disk (Ironic's cleaning or a new
// deploy); the Node of a live ISO when the agent writes any of the host's
// disks. Nothing else deletes a Node, as nothing on a real host would:
// ejecting media and powering off, in any order, keep it (NotReady while
// off); whoever retires the machine deletes its Node (Cluster API does).
// Node writes are retried with backoff and end in the host's latest
// state.
//
// # API server ports
//
// With Options.HostAPIServers, a control-plane host (kubeadm init, or a
// join carrying the cluster CA) that booted from a config drive whose
// user-data names an API server serves its API server port: it listens on
// its Node's InternalIP, port HostAPIPort (6443), added to lo (and removed
// after) when this machine lacks that address, which needs root, and
// forwards each connection to the API server of the user-data (dial 5 s,
// TCP keep-alive, at most 64 connections at once per host, the others
// waiting), so a load balancer in front of the hosts reaches the cluster
// through them. A connection from beyond Options.HostAPIAllow (default
// DefaultHostAPIAllow: loopback and 10.88.0.0/16, a local real node's
// pods) is closed at once. Powering off, restarting, booting anything
// else, deprovisioning and Close close the port, its connections and the
// address; a port that cannot be served (no root, the address in use) is
// logged and the host boots anyway.
//
// # Faults
//
// SetFault makes one host's requests fail: the connection closed
// (Unreachable), held (Delay), resets answered 500 (FailResets), or 401
// whatever the credentials (WrongCredentials); NoHeartbeat makes the
// deploy agent the host starts next look its node up and never
// heartbeat (for Ironic's timeouts); PowerLag answers and counts a reset
// at once but applies it only after the lag, the system reporting its old
// power state meanwhile (a slow BMC). The service root and sessions are
// shared by all hosts and stay up.
//
// # Listener
//
// Start serves on a loopback address, or beyond it only with TLS, with
// httplimit's server timeouts (Options.Timeouts; by default a header within
// 10 s, a request within 60 s, an answer within 120 s, an idle kept-alive
// connection closed after 120 s). A request body is read up to 4 MiB.
package emulator
