// Package services turns a SIPCluster and the BareMetalHosts picked for it
// into the Kubernetes objects of the services SIP runs for the tenant
// cluster, in the SIPCluster's namespace: HAProxy load balancers in front of
// the control plane and the workers, an SSH jump host, and an OIDC provider
// (Dex). It is pure: Build reads its Inputs and returns objects, and the
// controller applies them and reads their readiness. Validate checks
// spec.services on its own, so a bad field is reported by its path before
// anything is built.
//
// # Names
//
// Service i of a kind is named <kind>-<cluster>-<i>, with kind one of
// loadbalancer-controlplane, loadbalancer-worker, jumphost and auth; the
// index is always there, so no two (cluster, index) pairs share a name. A
// name that would not be a DNS-1035 label (a cluster name with dots, or too
// long) is cut and suffixed with a hash of the full name. ServiceNames
// returns them. Every object carries the labels sip.airshipit.org/cluster-name
// and sip.airshipit.org/service (ServiceLabel) and a controller owner
// reference to the SIPCluster.
//
// # Load balancers
//
// loadBalancerControlPlane[i] is HAProxy in TCP mode: a frontend on 6443
// balanced round-robin over the active ControlPlane hosts' addresses on
// nodeInterfaceId, port 6443. Each server is checked with an HTTPS GET
// /readyz (what the API server answers without credentials), so a dead or
// unready API server is skipped until it recovers. loadBalancerWorker[i]
// has one frontend per port of nodePortRange, forwarding to the same port
// of each active Worker host with TCP connect checks. Standby hosts are
// never backends. The configuration is a ConfigMap mounted at
// /usr/local/etc/haproxy/haproxy.cfg (where the official image reads it);
// its SHA-256 is a pod-template annotation, so a changed host set rolls the
// pod. The pods run as uid 99, the official image's haproxy user.
//
// # Jump host
//
// jumpHost[i] runs the image's sshd. The image is expected to be laid out
// as upstream SIP's jump-host image is (sshd on port 22 started by the
// image, a login user "ubuntu" of uid and gid 1000) and to have sh,
// install, bash 4.4 or later, curl, tr and sed.
// An init container installs authorized_keys (sshAuthorizedKeys) and an SSH
// client config into ~ubuntu/.ssh: one "Host <BareMetalHost name>" alias per
// picked host (active and standby) with HostName its address on
// nodeInterfaceId, User ubuntu and an IdentityFile per private key of the
// nodeSSHPrivateKeys Secret, mounted at /etc/opt/sip/ssh-keys. The command
// /usr/local/bin/power (power list | power <host> on|off|reboot|status)
// calls the host's Redfish ComputerSystem with curl. The BMC credentials are
// in the Secret <name>-bmc, mounted at /etc/opt/sip/bmc, and read when the
// command runs: they are never in a ConfigMap nor on curl's command line.
// With bmc.proxy false the command bypasses any proxy (curl --noproxy '*');
// with bmc.proxy true it goes through the proxy of curl's usual variables
// (https_proxy for https BMCs, http_proxy for http ones, or ALL_PROXY) in
// the caller's environment, and refuses to run without one.
// SIP_BMC_INSECURE=true skips the BMC's certificate check. The Secrets are
// mounted 0440, group 1000 (the pod's fsGroup), so the login user can read
// them and others cannot. The jump host runs as root, as sshd must.
//
// # Auth
//
// auth[i] is Dex (its official image, run as uid 1001) with storage type
// memory: signing keys, sessions and refresh tokens are lost when the pod
// restarts, so users log in again; nothing needs a volume or API access, so
// the pod has no ServiceAccount token. Its config.yaml is a Secret (mode
// 0440, group 1001), never a ConfigMap: a connector's configSecrets (an LDAP
// bindPW, an OIDC clientSecret) are keys of Secrets of the SIPCluster's
// namespace (Inputs.ConnectorSecrets) that Build writes into the connector's
// config at the named field, and only there. A field also set in config,
// or a path through a value that is no object, is an error; errors name the
// field and the Secret, never a value. The pod template's hash is of the
// configuration with each such value replaced by its Secret's name, key and
// resourceVersion, so a changed Secret rolls Dex without the hash revealing
// the value. Each static client's secret is named by environment variable
// (secretEnv), which the Deployment fills from the client's secretRef.
// Dex's own $VAR expansion is off (DEX_EXPAND_ENV=false): a connector
// config, and a secret value with a "$" in it, is used as written. The
// OIDCStatus is auth[0]'s: its issuer, its first static client, and the
// matching kube-apiserver flags.
//
// Every pod has resource requests, a readiness probe on its service port,
// nodeSelector spec.nodeLabels, and no service account token.
package services
