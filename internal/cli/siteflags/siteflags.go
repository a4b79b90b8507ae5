package siteflags

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/airshipit/airship-go/internal/config"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/document/fn"
	"github.com/airshipit/airship-go/internal/phase"
	"github.com/airshipit/airship-go/internal/phase/executors"
)

// Functions runs the built-in KRM functions (ReplacementTransformer,
// Templater, the sops function) in process during builds; any other
// function is an error, and nothing is ever executed.
var Functions document.FunctionRunner = &fn.Runner{}

// Options are the global flags of site commands.
type Options struct {
	// ConfigPath is --airshipconf.
	ConfigPath string
	// NoCache is --no-render-cache.
	NoCache bool
	// Kubeconfig is --kubeconfig: used for every cluster instead of the ClusterMap's sources.
	Kubeconfig string
}

// AddFlags registers the global flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigPath, "airshipconf", config.DefaultPath(), "path to the airshipctl configuration file ($AIRSHIPCONFIG)")
	fs.BoolVar(&o.NoCache, "no-render-cache", false, "always run kustomize, even when nothing changed since the last render")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig for every cluster (context named after the cluster, or its only context), instead of the ClusterMap's kubeconfigSources ($KUBECONFIG, a list of files merged as kubectl does, when unset)")
}

// Config loads the airship config.
func (o *Options) Config() (*config.Config, error) {
	path := o.ConfigPath
	if path == "" {
		path = config.DefaultPath()
	}
	return config.Load(path)
}

// BuildOptions are the document build options commands use.
func (o *Options) BuildOptions() document.BuildOptions {
	opts := document.BuildOptions{Functions: Functions}
	if !o.NoCache {
		opts.Cache = &document.Cache{Dir: CacheDir(), Salt: programSalt()}
	}
	return opts
}

// Site loads the config and builds the current context's phase bundle,
// with every executor registered.
func (o *Options) Site() (*phase.Site, error) {
	executors.Register()
	cfg, err := o.Config()
	if err != nil {
		return nil, err
	}
	s, err := phase.Load(cfg, "", o.BuildOptions())
	if err != nil {
		return nil, err
	}
	s.KubeconfigOverride = o.Kubeconfig
	return s, nil
}

// CacheDir is where rendered bundles are cached: $AIRSHIP_RENDER_CACHE_DIR,
// else ${XDG_CACHE_HOME:-~/.cache}/airship/render.
func CacheDir() string {
	if d := os.Getenv("AIRSHIP_RENDER_CACHE_DIR"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "airship-render-cache")
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "airship", "render")
}

// programSalt ties cache entries to this exact binary, so an upgraded
// airshipctl never serves what an older one rendered.
func programSalt() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	st, err := os.Stat(exe)
	if err != nil {
		return exe
	}
	return fmt.Sprintf("%s|%d|%d", exe, st.Size(), st.ModTime().UnixNano())
}
