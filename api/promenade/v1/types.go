// Package v1 holds the data types of the promenade/*/v1 documents and of the
// deckhand/* documents that carry generated PKI material.
package v1

// Schema names of the documents Promenade reads and writes.
const (
	SchemaGenesis           = "promenade/Genesis/v1"
	SchemaKubernetesNode    = "promenade/KubernetesNode/v1"
	SchemaKubernetesNetwork = "promenade/KubernetesNetwork/v1"
	SchemaHostSystem        = "promenade/HostSystem/v1"
	SchemaKubelet           = "promenade/Kubelet/v1"
	SchemaDocker            = "promenade/Docker/v1"
	SchemaContainerd        = "promenade/Containerd/v1"
	SchemaEncryptionPolicy  = "promenade/EncryptionPolicy/v1"
	SchemaPKICatalog        = "promenade/PKICatalog/v1"

	SchemaCertificate             = "deckhand/Certificate/v1"
	SchemaCertificateKey          = "deckhand/CertificateKey/v1"
	SchemaCertificateAuthority    = "deckhand/CertificateAuthority/v1"
	SchemaCertificateAuthorityKey = "deckhand/CertificateAuthorityKey/v1"
	SchemaPublicKey               = "deckhand/PublicKey/v1"
	SchemaPrivateKey              = "deckhand/PrivateKey/v1"
)

// AnchorsLabel set to AnchorsDisabled on a Node keeps every anchor
// DaemonSet of Promenade's core-component charts off it (the anchors
// tolerate every taint and write the host's /etc/kubernetes): for a node
// Promenade does not manage, such as a real node of `airshipctl cluster
// local`, which is the developer's own machine. An extension over upstream
// Promenade; a Node without the label is as upstream has it.
const (
	AnchorsLabel    = "promenade.airshipit.org/anchors"
	AnchorsDisabled = "disabled"
)

// Labels are the node labels, "key=value" strings. Static labels are fixed
// for the life of the node; dynamic ones may be changed later.
type Labels struct {
	Static  []string `json:"static,omitempty"`
	Dynamic []string `json:"dynamic,omitempty"`
}

// File is a file laid down on a host. Exactly one of Content, Symlink or
// TarURL+TarPath is set.
type File struct {
	Path    string `json:"path"`
	Mode    int    `json:"mode"`
	Content string `json:"content,omitempty"`
	Symlink string `json:"symlink,omitempty"`
	TarURL  string `json:"tar_url,omitempty"`
	TarPath string `json:"tar_path,omitempty"`
}

// Genesis describes the first node of the cluster.
type Genesis struct {
	Hostname   string          `json:"hostname"`
	IP         string          `json:"ip"`
	ExternalIP string          `json:"external_ip,omitempty"`
	Domain     string          `json:"domain,omitempty"`
	Labels     Labels          `json:"labels"`
	Images     GenesisImages   `json:"images"`
	Files      []File          `json:"files,omitempty"`
	APIServer  *APIServerExtra `json:"apiserver,omitempty"`
	Armada     *GenesisArmada  `json:"armada,omitempty"`
}

// GenesisImages are the images of the genesis static pods.
type GenesisImages struct {
	Armada     string           `json:"armada,omitempty"`
	Kubernetes KubernetesImages `json:"kubernetes"`
}

// KubernetesImages are the control-plane images.
type KubernetesImages struct {
	APIServer         string `json:"apiserver"`
	ControllerManager string `json:"controller-manager"`
	Etcd              string `json:"etcd"`
	Scheduler         string `json:"scheduler"`
}

// APIServerExtra adds arguments to the genesis kube-apiserver.
type APIServerExtra struct {
	CommandPrefix []string `json:"command_prefix,omitempty"`
	Arguments     []string `json:"arguments,omitempty"`
}

// GenesisArmada configures genesis.sh's bootstrap Armada step.
type GenesisArmada struct {
	// target_manifest is the metadata.name of the armada/Manifest document
	// (v1 or v2, among the configuration documents) that the bootstrap
	// Armada deploys onto the genesis control plane. Empty: genesis.sh has
	// no bootstrap Armada step.
	// +optional
	TargetManifest string `json:"target_manifest,omitempty"`
	// operator is where the armada-operator binary that runs as the
	// bootstrap Armada comes from (default: already installed at
	// /opt/armada/bin/armada-operator, for example by a Genesis file).
	// +optional
	Operator *ArmadaOperatorSource `json:"operator,omitempty"`
	// chart_root is the armada-operator's --chart-root: the directory on
	// the genesis host that chart locations on disk are read below.
	// +optional
	ChartRoot string `json:"chart_root,omitempty"`
}

// ArmadaOperatorSource locates the armada-operator binary on the genesis
// host: fetched from a tarball (tar_url and tar_path), or already at path.
type ArmadaOperatorSource struct {
	// path is where the binary is installed or found (absolute; default
	// /opt/armada/bin/armada-operator).
	// +optional
	Path string `json:"path,omitempty"`
	// tar_url is a gzip tarball holding the binary, fetched once by
	// genesis.sh; without it the binary must already be at path.
	// +optional
	TarURL string `json:"tar_url,omitempty"`
	// tar_path is the binary's member in the tarball; required with tar_url.
	// +optional
	TarPath string `json:"tar_path,omitempty"`
}

// KubernetesNode describes a node joining the cluster.
type KubernetesNode struct {
	Hostname   string   `json:"hostname"`
	IP         string   `json:"ip"`
	ExternalIP string   `json:"external_ip,omitempty"`
	Domain     string   `json:"domain,omitempty"`
	JoinIP     string   `json:"join_ip,omitempty"`
	JoinIPs    []string `json:"join_ips,omitempty"`
	Labels     Labels   `json:"labels,omitempty"`
}

// KubernetesNetwork is the cluster's network configuration.
type KubernetesNetwork struct {
	DNS          DNS          `json:"dns"`
	Etcd         *EtcdNetwork `json:"etcd,omitempty"`
	Kubernetes   KubeNetwork  `json:"kubernetes"`
	HostsEntries []HostsEntry `json:"hosts_entries,omitempty"`
	NTP          *NTP         `json:"ntp,omitempty"`
	Proxy        *Proxy       `json:"proxy,omitempty"`
}

// DNS settings.
type DNS struct {
	ClusterDomain             string   `json:"cluster_domain"`
	ServiceIP                 string   `json:"service_ip"`
	UpstreamServers           []string `json:"upstream_servers,omitempty"`
	BootstrapValidationChecks []string `json:"bootstrap_validation_checks,omitempty"`
}

// EtcdNetwork are the Kubernetes etcd ports.
type EtcdNetwork struct {
	ContainerPort int `json:"container_port"`
	HAProxyPort   int `json:"haproxy_port"`
}

// KubeNetwork are the Kubernetes address ranges and ports.
type KubeNetwork struct {
	PodCIDR       string `json:"pod_cidr"`
	ServiceCIDR   string `json:"service_cidr"`
	ServiceIP     string `json:"service_ip"`
	APIServerPort int    `json:"apiserver_port"`
	HAProxyPort   int    `json:"haproxy_port"`
}

// HostsEntry is a line of /etc/hosts.
type HostsEntry struct {
	IP    string   `json:"ip"`
	Names []string `json:"names"`
}

// NTP servers.
type NTP struct {
	Servers []string `json:"servers"`
}

// Proxy is the HTTP proxy used by apt and the container runtime.
type Proxy struct {
	URL               string   `json:"url"`
	AdditionalNoProxy []string `json:"additional_no_proxy,omitempty"`
}

// HostSystem is what every host gets: files, packages and images.
type HostSystem struct {
	Files        []File                 `json:"files,omitempty"`
	SystemdUnits map[string]SystemdUnit `json:"systemd_units,omitempty"`
	Images       HostImages             `json:"images"`
	Packages     HostPackages           `json:"packages"`
	Validation   map[string]any         `json:"validation,omitempty"`
}

// SystemdUnit actions.
type SystemdUnit struct {
	Enable  bool `json:"enable,omitempty"`
	Disable bool `json:"disable,omitempty"`
	Start   bool `json:"start,omitempty"`
	Stop    bool `json:"stop,omitempty"`
}

// HostImages are images run on every host.
type HostImages struct {
	HAProxy         string         `json:"haproxy"`
	Helm            map[string]any `json:"helm,omitempty"`
	MonitoringImage string         `json:"monitoring_image,omitempty"`
	CoreDNS         string         `json:"coredns,omitempty"`
}

// HostPackages are apt packages for all nodes, the genesis node and joining nodes.
type HostPackages struct {
	Common  *ReposAndPackages `json:"common,omitempty"`
	Genesis *ReposAndPackages `json:"genesis,omitempty"`
	Join    *ReposAndPackages `json:"join,omitempty"`
}

// ReposAndPackages are apt repositories, their keys and packages.
type ReposAndPackages struct {
	Repositories []string          `json:"repositories,omitempty"`
	Keys         []string          `json:"keys,omitempty"`
	Required     *RequiredPackages `json:"required,omitempty"`
	Additional   []string          `json:"additional,omitempty"`
}

// RequiredPackages: a container runtime (docker or runtime) and socat.
type RequiredPackages struct {
	Docker  string `json:"docker,omitempty"`
	Runtime string `json:"runtime,omitempty"`
	Socat   string `json:"socat"`
}

// Kubelet configuration.
type Kubelet struct {
	Images              KubeletImages  `json:"images"`
	Arguments           []string       `json:"arguments,omitempty"`
	ConfigFileOverrides map[string]any `json:"config_file_overrides,omitempty"`
}

// KubeletImages holds the pause image.
type KubeletImages struct {
	Pause string `json:"pause"`
}

// Docker is the content of /etc/docker/daemon.json.
type Docker struct {
	Config map[string]any `json:"config"`
}

// Containerd is the content of /etc/containerd/config.toml.
type Containerd struct {
	Config string `json:"config"`
}

// EncryptionPolicy configures encryption of resources in etcd.
type EncryptionPolicy struct {
	Etcd    []EtcdEncryption `json:"etcd,omitempty"`
	Scripts map[string]any   `json:"scripts,omitempty"`
}

// EtcdEncryption is one entry of the apiserver EncryptionConfiguration.
type EtcdEncryption struct {
	Resources []string         `json:"resources"`
	Providers []map[string]any `json:"providers"`
}

// PKICatalog lists the certificate authorities, certificates and keypairs
// of a site.
type PKICatalog struct {
	CertificateAuthorities map[string]CatalogCA `json:"certificate_authorities,omitempty"`
	// Certificates signed by a CA defined in this or another catalog; each
	// names its CA.
	Certificates []CatalogCertificate `json:"certificates,omitempty"`
	Keypairs     []CatalogKeypair     `json:"keypairs,omitempty"`
}

// CatalogCA is a certificate authority and the certificates it signs.
type CatalogCA struct {
	Description  string               `json:"description,omitempty"`
	KeyType      string               `json:"key_type,omitempty"`
	Certificates []CatalogCertificate `json:"certificates,omitempty"`
}

// CatalogCertificate is one certificate of the catalog.
type CatalogCertificate struct {
	DocumentName           string   `json:"document_name"`
	Description            string   `json:"description,omitempty"`
	CA                     string   `json:"ca,omitempty"`
	CommonName             string   `json:"common_name"`
	Hosts                  []string `json:"hosts,omitempty"`
	Groups                 []string `json:"groups,omitempty"`
	KubernetesServiceNames []string `json:"kubernetes_service_names,omitempty"`
	KeyType                string   `json:"key_type,omitempty"`
}

// CatalogKeypair is a bare keypair, such as the service-account signing key.
type CatalogKeypair struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	KeyType     string `json:"key_type,omitempty"`
}
