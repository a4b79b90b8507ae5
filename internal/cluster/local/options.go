package local

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/airshipit/airship-go/internal/cluster/kwok"
	"github.com/airshipit/airship-go/internal/pki"
)

// Versions of the binaries the control plane runs. They must match
// hack/testbin/versions.env (a unit test checks).
const (
	KubernetesVersion = "v1.37.1"
	EtcdVersion       = "v3.7.3"
	KwokVersion       = "v0.8.0"
)

// Component names, in start order.
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	Kwok              = "kwok"
)

// Components lists every component in the order they start; they stop in reverse.
var Components = []string{Etcd, APIServer, ControllerManager, Scheduler, Kwok}

// FakeNodeAnnotation marks the Nodes kwok manages.
const FakeNodeAnnotation = kwok.NodeAnnotation

// ErrNoBinaries is returned when the control-plane (or Cluster API
// manager) binaries are not built.
var ErrNoBinaries = errors.New("control-plane binaries not built")

// BuildHint tells a user how to get the binaries.
const BuildHint = "build them with `make testbin` (about 14 minutes cold, seconds when cached)"

// Options configure a local control plane.
type Options struct {
	// StateDir holds PKI, kubeconfigs, etcd data, logs and state.json.
	StateDir string
	// BinDir holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok.
	BinDir string
	// APIServerPort is the secure port of kube-apiserver on 127.0.0.1; 0 picks a free one.
	APIServerPort int
	// Nodes is how many kwok Nodes to create; the first is labelled
	// control-plane, the rest worker. Zero creates none (for real kubelets
	// to join), so it is not a "use the default" value: the CLI's --nodes
	// flag carries the default of 3. kwok runs either way; it manages only
	// Nodes annotated FakeNodeAnnotation, so it never touches a real one.
	Nodes int
	// RealNodes is how many real nodes (a kubelet, its containerd and the
	// host's kube-proxy) join the cluster; they need root, the node binaries
	// (MissingNodeBinaries) and ImagesDir. Zero keeps the cluster to
	// processes on loopback.
	RealNodes int
	// ImagesDir holds the OCI archives (`make images`) real nodes import,
	// the sandbox image among them.
	ImagesDir string
	// RealNodeTaints are taints every real node registers with, each as
	// KEY[=VALUE]:EFFECT (kubectl taint's form), e.g. to keep pods that
	// have no image on this host to the kwok Nodes while the pods that
	// tolerate the taint run for real.
	RealNodeTaints []string
	// Timeout bounds the whole start-up.
	Timeout time.Duration
	// Progress receives one line per step; nil discards.
	Progress io.Writer
	// CA, when set, is the cluster CA (LoadCA): the API server, the
	// components and the kubeconfigs trust it and their certificates are
	// signed by it, as when a site's PKI names the cluster's CA. Nil
	// generates one.
	CA *pki.KeyPair
	// ExtraControllerManagerArgs are appended to kube-controller-manager's flags.
	ExtraControllerManagerArgs []string
}

// DefaultStateDir is where `airshipctl cluster local` keeps its cluster
// unless told otherwise: $AIRSHIP_LOCAL_STATE_DIR, else ~/.airship/local.
func DefaultStateDir() string {
	if d := os.Getenv("AIRSHIP_LOCAL_STATE_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "airship-local")
	}
	return filepath.Join(home, ".airship", "local")
}

// DefaultBinDir is the cache hack/testbin/build.sh writes to:
// $AIRSHIP_TESTBIN_DIR, else $KUBEBUILDER_ASSETS when it holds kwok too, else
// ${XDG_CACHE_HOME:-~/.cache}/airship/k8s-<v>-etcd-<v>-kwok-<v>/bin.
func DefaultBinDir() string {
	if d := os.Getenv("AIRSHIP_TESTBIN_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		if _, err := os.Stat(filepath.Join(d, Kwok)); err == nil {
			return d
		}
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "airship",
		fmt.Sprintf("k8s-%s-etcd-%s-kwok-%s", KubernetesVersion, EtcdVersion, KwokVersion), "bin")
}

func (o *Options) setDefaults() {
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir()
	}
	if o.BinDir == "" {
		o.BinDir = DefaultBinDir()
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
}

// MissingBinaries lists the control-plane binaries absent from dir.
func MissingBinaries(dir string) []string {
	var missing []string
	for _, c := range Components {
		st, err := os.Stat(filepath.Join(dir, c))
		if err != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			missing = append(missing, c)
		}
	}
	return missing
}

// paths inside the state directory.
type paths struct{ root string }

func (p paths) pki() string                 { return filepath.Join(p.root, "pki") }
func (p paths) etcdData() string            { return filepath.Join(p.root, "etcd") }
func (p paths) logs() string                { return filepath.Join(p.root, "logs") }
func (p paths) log(component string) string { return filepath.Join(p.logs(), component+".log") }
func (p paths) state() string               { return filepath.Join(p.root, "state.json") }
func (p paths) adminKubeconfig() string     { return filepath.Join(p.root, "kubeconfig") }
func (p paths) kubeconfig(user string) string {
	return filepath.Join(p.root, "kubeconfigs", user+".kubeconfig")
}
func (p paths) kwokConfig() string { return filepath.Join(p.root, "kwok.yaml") }
func (p paths) lock() string       { return filepath.Join(p.root, ".lock") }
func (p paths) nodes() string      { return filepath.Join(p.root, "nodes") }
