package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Modules are the libraries Info reports, by the name shown and the module path.
var Modules = []struct{ Name, Path string }{
	{"kubernetes", "k8s.io/client-go"},
	{"helm", "helm.sh/helm/v4"},
	{"kustomize", "sigs.k8s.io/kustomize/api"},
	{"clusterAPI", "sigs.k8s.io/cluster-api"},
	{"controllerRuntime", "sigs.k8s.io/controller-runtime"},
}

// Info describes one binary.
type Info struct {
	Binary    string `json:"binary"`
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	// Modules maps a name from Modules to the version linked in; a library
	// the binary does not link is absent.
	Modules map[string]string `json:"modules"`
}

// Get reads the running binary's build information.
func Get(binary string) Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(binary, bi)
}

func fromBuildInfo(binary string, bi *debug.BuildInfo) Info {
	info := Info{
		Binary:    binary,
		Version:   "(devel)",
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		Modules:   map[string]string{},
	}
	if bi == nil {
		return info
	}
	if v := bi.Main.Version; v != "" {
		info.Version = v
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		for _, m := range Modules {
			if d.Path == m.Path {
				info.Modules[m.Name] = d.Version
			}
		}
	}
	return info
}
