package builder

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	armadacrd "github.com/airshipit/airship-go/config/armada/crd"
	"github.com/airshipit/airship-go/internal/armada/convert"
)

// Where genesis.sh's bootstrap Armada finds its inputs on the genesis host.
const (
	// ArmadaDir holds the CRDs and the manifest objects of the bootstrap
	// Armada.
	ArmadaDir = "/etc/genesis/armada"
	// ArmadaNamespace is the namespace of the bootstrap ArmadaManifest,
	// ArmadaChartGroups and ArmadaCharts.
	ArmadaNamespace = "kube-system"
	// DefaultArmadaOperatorPath is where genesis.sh installs or expects
	// the armada-operator binary unless the Genesis document says otherwise.
	DefaultArmadaOperatorPath = "/opt/armada/bin/armada-operator"
	// GenesisValidatorPath is the final validation genesis.sh runs after
	// the bootstrap Armada.
	GenesisValidatorPath = "/etc/genesis/validate-bootstrap.sh"
)

// armadaPlan is what genesis.sh needs to run the bootstrap Armada.
type armadaPlan struct {
	Manifest, Namespace, Operator, ChartRoot string
	// CRDs are the names of the CustomResourceDefinitions installed.
	CRDs []string
	// Charts are the ArmadaCharts of the manifest, in deployment order.
	Charts   []string
	crdYAML  []byte
	objYAML  []byte
	operator *Remote
}

// armadaPlan reads the Genesis document's armada section and the Armada
// documents of the configuration. It returns nil when genesis has no
// target manifest.
func (b *Builder) armadaPlan() (*armadaPlan, error) {
	a := b.genesis.Armada
	if a == nil || a.TargetManifest == "" {
		return nil, nil
	}
	p := &armadaPlan{Manifest: a.TargetManifest, Namespace: ArmadaNamespace, Operator: DefaultArmadaOperatorPath, ChartRoot: a.ChartRoot}
	if o := a.Operator; o != nil {
		if o.Path != "" {
			p.Operator = o.Path
		}
		if o.TarURL != "" {
			p.operator = &Remote{Path: p.Operator, URL: o.TarURL, Member: o.TarPath, Mode: 0o755}
		}
	}
	var docs []*convert.Document
	for i := range b.set.Documents {
		d := &b.set.Documents[i]
		if !strings.HasPrefix(d.Schema, "armada/") {
			continue
		}
		cd := &convert.Document{Schema: d.Schema, Data: d.Data, File: d.Source, Index: d.Index}
		cd.Metadata.Name = d.Metadata.Name
		docs = append(docs, cd)
	}
	res, err := convert.Convert(docs, convert.Options{Namespace: p.Namespace})
	if err != nil {
		return nil, fmt.Errorf("genesis armada.target_manifest %q: converting the Armada documents: %w", a.TargetManifest, err)
	}
	objs, charts, err := manifestTree(res.Objects, a.TargetManifest)
	if err != nil {
		return nil, err
	}
	p.Charts = charts
	if p.objYAML, err = convert.Marshal(objs, "yaml"); err != nil {
		return nil, fmt.Errorf("genesis armada.target_manifest %q: %w", a.TargetManifest, err)
	}
	if p.crdYAML, p.CRDs, err = armadaCRDs(); err != nil {
		return nil, err
	}
	return p, nil
}

// manifestTree keeps the manifest named name, its groups and their charts
// (with the charts they depend on), manifest first. charts lists the
// charts in deployment order.
func manifestTree(all []runtime.Object, name string) (objs []runtime.Object, charts []string, err error) {
	var manifest *armadav1.ArmadaManifest
	groups := map[string]*armadav1.ArmadaChartGroup{}
	byName := map[string]*armadav1.ArmadaChart{}
	var known []string
	for _, o := range all {
		switch x := o.(type) {
		case *armadav1.ArmadaManifest:
			known = append(known, x.Name)
			if x.Name == name {
				manifest = x
			}
		case *armadav1.ArmadaChartGroup:
			groups[x.Name] = x
		case *armadav1.ArmadaChart:
			byName[x.Name] = x
		}
	}
	if manifest == nil {
		found := "there is none"
		if len(known) > 0 {
			sort.Strings(known)
			found = "found " + strings.Join(known, ", ")
		}
		return nil, nil, fmt.Errorf("genesis armada.target_manifest: no armada/Manifest document named %q among the configuration documents (%s)", name, found)
	}
	objs = append(objs, manifest)
	seen := map[string]bool{}
	var addChart func(string)
	addChart = func(c string) {
		if seen[c] {
			return
		}
		seen[c] = true
		ch := byName[c]
		for _, dep := range ch.Spec.Dependencies {
			addChart(dep)
		}
		objs = append(objs, ch)
		charts = append(charts, c)
	}
	for _, g := range manifest.Spec.ChartGroups {
		objs = append(objs, groups[g])
		for _, c := range groups[g].Spec.ChartGroup {
			addChart(c)
		}
	}
	return objs, charts, nil
}

// armadaCRDs returns the Armada CRDs as one YAML stream and their names.
func armadaCRDs() ([]byte, []string, error) {
	files, err := fs.Glob(armadacrd.Bases, "bases/*.yaml")
	if err != nil {
		return nil, nil, fmt.Errorf("armada CRDs: %w", err)
	}
	var out []byte
	var names []string
	for _, f := range files {
		b, err := fs.ReadFile(armadacrd.Bases, f)
		if err != nil {
			return nil, nil, fmt.Errorf("armada CRDs: %w", err)
		}
		if len(out) > 0 {
			out = append(out, "---\n"...)
		}
		out = append(out, b...)
		// Files are named <group>_<plural>.yaml, the CRD <plural>.<group>.
		base := strings.TrimSuffix(path.Base(f), ".yaml")
		if group, plural, ok := strings.Cut(base, "_"); ok {
			names = append(names, plural+"."+group)
		}
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("armada CRDs: none embedded")
	}
	return out, names, nil
}

// addArmada lays down the bootstrap Armada's inputs.
func (p *Payload) addArmada(a *armadaPlan) {
	p.add(ArmadaDir+"/crds.yaml", 0o644, string(a.crdYAML))
	// Chart values may hold secrets.
	p.add(ArmadaDir+"/manifest.yaml", 0o600, string(a.objYAML))
	if a.operator != nil {
		p.Remotes = append(p.Remotes, *a.operator)
	}
}
