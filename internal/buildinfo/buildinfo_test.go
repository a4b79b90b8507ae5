package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want Info
	}{
		{
			name: "no build info",
			want: Info{Binary: "x", Version: "(devel)", Modules: map[string]string{}},
		},
		{
			name: "release build with replaced and unrelated modules",
			bi: &debug.BuildInfo{
				GoVersion: "go1.26.8",
				Main:      debug.Module{Path: "github.com/airshipit/airship-go", Version: "v0.3.0"},
				Deps: []*debug.Module{
					{Path: "k8s.io/client-go", Version: "v0.37.2"},
					{Path: "helm.sh/helm/v4", Version: "v4.3.0", Replace: &debug.Module{Path: "helm.sh/helm/v4", Version: "v4.3.1"}},
					{Path: "github.com/spf13/cobra", Version: "v1.10.2"},
				},
				Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}},
			},
			want: Info{Binary: "x", Version: "v0.3.0", Revision: "abc123", Modified: true, GoVersion: "go1.26.8",
				Modules: map[string]string{"kubernetes": "v0.37.2", "helm": "v4.3.1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuildInfo("x", tt.bi)
			if tt.want.GoVersion == "" {
				tt.want.GoVersion = got.GoVersion
			}
			tt.want.Platform = got.Platform
			if got.Binary != tt.want.Binary || got.Version != tt.want.Version || got.Revision != tt.want.Revision ||
				got.Modified != tt.want.Modified || got.GoVersion != tt.want.GoVersion || len(got.Modules) != len(tt.want.Modules) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for k, v := range tt.want.Modules {
				if got.Modules[k] != v {
					t.Errorf("module %s = %q, want %q", k, got.Modules[k], v)
				}
			}
		})
	}
}
