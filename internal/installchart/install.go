package installchart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/armada/helm"
)

// ChartImages maps the chart's values keys to the images `make images`
// builds for them.
var ChartImages = map[string]string{
	"armada":    "armada-operator",
	"metal3":    "metal3-operator",
	"sip":       "sip-operator",
	"promenade": "promenade",
}

// ImageValues reads the kustomization.yaml `make images` writes beside
// its archives (dir) and returns the chart values that pin each image it
// built by digest ({armada: {image: {digest: sha256:...}}, ...}), for the
// images of ChartImages it holds, at the repository its newName gives
// when the images were pushed (`kustomize edit set image`). An image it
// does not hold keeps the chart's default.
func ImageValues(dir string) (map[string]any, error) {
	file := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the images' digests: %w", err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
		Images     []struct {
			Name    string `json:"name"`
			NewName string `json:"newName"`
			Digest  string `json:"digest"`
		} `json:"images"`
	}
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	vals := map[string]any{}
	for key, name := range ChartImages {
		for i, img := range k.Images {
			if img.Name != "localhost/airship/"+name {
				continue
			}
			if !strings.HasPrefix(img.Digest, "sha256:") || len(img.Digest) != len("sha256:")+64 {
				return nil, fmt.Errorf("%s: images[%d] (%s): digest %q is not a sha256 digest", file, i, img.Name, img.Digest)
			}
			image := map[string]any{"digest": img.Digest}
			if img.NewName != "" {
				image["repository"] = img.NewName
			}
			vals[key] = map[string]any{"image": image}
		}
	}
	return vals, nil
}

// MergeValues merges src into dst as Helm merges values files given one
// after another: maps merge key by key, anything else in src replaces
// what dst has.
func MergeValues(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := out[k].(map[string]any); ok {
				out[k] = MergeValues(dm, sm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// InstallOptions say which release of the chart to install or upgrade.
type InstallOptions struct {
	// Dir is the chart's directory (ChartDir below the repository).
	Dir string
	// Release and Namespace name the release; Namespace holds its records
	// and is created when missing.
	Release, Namespace string
	// Values override the chart's.
	Values map[string]any
	// Timeout bounds the install, the wait for the CRDs included.
	Timeout time.Duration
}

// Install installs the chart as `helm upgrade --install` does, through the
// Helm SDK (the Armada operator's client): a new release when none exists,
// else an upgrade to exactly these values, taking over the fields another
// manager set on the chart's objects (clusterctl applies the same CRDs,
// RBAC and admission policies as a provider's components). It does not
// wait for the workloads to be ready. It returns the release's revision.
func Install(ctx context.Context, cfg *rest.Config, o InstallOptions) (int, error) {
	ch, err := loader.LoadDir(o.Dir)
	if err != nil {
		return 0, fmt.Errorf("loading chart %s: %w", o.Dir, err)
	}
	c := helm.New(cfg, nil)
	opts := helm.Options{Namespace: o.Namespace, Name: o.Release, Chart: ch, Values: o.Values, Timeout: o.Timeout}
	last, err := c.Last(o.Namespace, o.Release)
	if err != nil {
		return 0, err
	}
	install := c.Install
	if last != nil {
		install = c.Upgrade
		opts.ForceConflicts = true
	}
	rel, err := install(ctx, opts)
	if err != nil {
		return 0, err
	}
	return rel.Version, nil
}
