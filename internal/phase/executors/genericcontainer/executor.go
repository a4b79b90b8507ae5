package genericcontainer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// GVK of the executor document.
var GVK = v1.GroupVersion.WithKind("GenericContainer")

// Executor is a GenericContainer executor for one phase.
type Executor struct {
	cfg executor.Config
	api *v1.GenericContainer
	// id names the executor document in messages: GenericContainer/name (file).
	id string

	// Stdout receives the output documents when the spec has no
	// sinkOutputDir (upstream prints them); nil means os.Stdout.
	Stdout io.Writer
	// lookPath finds runtimes and is exec.LookPath outside tests.
	lookPath func(string) (string, error)
	// now stamps the state file.
	now func() time.Time
}

// New decodes the executor document strictly: a misspelt field is an error.
func New(cfg executor.Config) (executor.Executor, error) {
	api := &v1.GenericContainer{}
	if err := cfg.ExecutorDoc.DecodeStrict(api); err != nil {
		return nil, fmt.Errorf("phase %q: executor document: %w", cfg.PhaseName, err)
	}
	return &Executor{cfg: cfg, api: api, id: cfg.ExecutorDoc.ID(), now: time.Now}, nil
}

// envName is what a variable name must look like.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks the spec, the config and that the phase's documents build.
func (e *Executor) Validate(context.Context) error {
	s := e.api.Spec
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(e.id+": "+format, args...)) }
	if strings.TrimSpace(s.Image) == "" {
		add("spec.image is required")
	}
	switch s.Type {
	case "", v1.GenericContainerTypeAirship, v1.GenericContainerTypeKrm:
	default:
		add("spec.type %q is not one of airship, krm", s.Type)
	}
	if r := s.Airship.ContainerRuntime; r != "" && !slices.Contains(Runtimes, r) {
		add("spec.airship.containerRuntime %q is not one of %s", r, strings.Join(Runtimes, ", "))
	}
	allowed := passEnvAllowed(os.Getenv)
	for i, v := range s.EnvVars {
		name, _, _ := strings.Cut(v, "=")
		if !envName.MatchString(name) {
			add("spec.envVars[%d] %q: want NAME=value or NAME, NAME made of letters, digits and _", i, v)
		} else if err := checkEnvVar(v, allowed); err != nil {
			add("spec.envVars[%d] %q: %v", i, v, err)
		}
	}
	if s.SinkOutputDir != "" {
		siteDir := e.cfg.SiteDir
		if siteDir == "" {
			siteDir = e.cfg.TargetPath
		}
		if _, err := confinedSink(siteDir, s.SinkOutputDir); err != nil {
			add("%v", err)
		}
	}
	for i, m := range s.StorageMounts {
		if m.DstPath == "" {
			add("spec.mounts[%d].dst is required", i)
		}
		if (m.MountType == "" || m.MountType == "bind") && m.Src == "" {
			add("spec.mounts[%d].src is required for a bind mount", i)
		}
	}
	if _, err := e.config(); err != nil {
		errs = append(errs, err)
	} else if p, err := e.plan(""); err == nil && p.Mode == ModeScript {
		if _, err := e.script(); err != nil {
			errs = append(errs, err)
		}
	}
	if e.cfg.Bundle != nil {
		if _, err := e.cfg.Bundle(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// config returns the functionConfig: the configRef document of the phase
// bundle, else config parsed, else nil.
func (e *Executor) config() (*yaml.RNode, error) {
	if ref := e.api.ConfigRef; ref != nil {
		if ref.Kind == "" || ref.Name == "" {
			return nil, fmt.Errorf("%s: configRef needs kind and name", e.id)
		}
		if e.cfg.PhaseBundle == nil {
			return nil, fmt.Errorf("%s: configRef %s/%s: no phase bundle to find it in", e.id, ref.Kind, ref.Name)
		}
		sel := document.NewSelector().ByKind(ref.Kind).ByName(ref.Name).ByNamespace(ref.Namespace)
		if ref.APIVersion != "" {
			sel = sel.ByAPIVersionKind(ref.APIVersion, ref.Kind)
		}
		d, err := e.cfg.PhaseBundle.SelectOne(sel)
		if err != nil {
			return nil, fmt.Errorf("%s: configRef: %w", e.id, err)
		}
		return d.Node().Copy(), nil
	}
	if strings.TrimSpace(e.api.Config) == "" {
		return nil, nil
	}
	n, err := yaml.Parse(e.api.Config)
	if err != nil {
		return nil, fmt.Errorf("%s: config is not one YAML document: %w", e.id, err)
	}
	if n.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: config is not a YAML object", e.id)
	}
	return n, nil
}

// script returns a toolbox config's script (data.script of a ConfigMap).
func (e *Executor) script() (string, error) {
	c, err := e.config()
	if err != nil {
		return "", err
	}
	field := "config"
	if e.api.ConfigRef != nil {
		field = "configRef"
	}
	if c == nil {
		return "", fmt.Errorf("%s: image %s runs a script: set %s to a ConfigMap with data.%s", e.id, e.api.Spec.Image, field, scriptKey)
	}
	if c.GetKind() != "ConfigMap" {
		return "", fmt.Errorf("%s: %s is a %s; image %s runs the data.%s of a ConfigMap", e.id, field, c.GetKind(), e.api.Spec.Image, scriptKey)
	}
	v, err := c.Pipe(yaml.Lookup("data", scriptKey))
	if err != nil || v == nil || v.YNode().Kind != yaml.ScalarNode || strings.TrimSpace(v.YNode().Value) == "" {
		return "", fmt.Errorf("%s: %s ConfigMap/%s has no data.%s", e.id, field, c.GetName(), scriptKey)
	}
	return v.YNode().Value, nil
}

// plan works out how the image runs; kubeconfigPath is the host path of
// the kubeconfig copy ("" when rendering).
func (e *Executor) plan(kubeconfigPath string) (*Plan, error) {
	if kubeconfigPath == "" {
		kubeconfigPath = "(a private copy of cluster " + e.cfg.ClusterName + "'s kubeconfig)"
	}
	p, err := makePlan(defaultPlanInput(planInput{
		spec:           e.api.Spec,
		cluster:        e.cfg.ClusterName,
		targetPath:     e.cfg.TargetPath,
		siteDir:        e.cfg.SiteDir,
		kubeconfigPath: kubeconfigPath,
		lookPath:       e.lookPath,
	}))
	if err != nil {
		return nil, fmt.Errorf("phase %q: %s: %w", e.cfg.PhaseName, e.id, err)
	}
	return p, nil
}

// documents are the phase's documents (its documentEntryPoint), the
// ResourceList items the image gets; none when the phase has no entry point.
func (e *Executor) documents() ([]*yaml.RNode, error) {
	if e.cfg.Bundle == nil {
		return nil, nil
	}
	b, err := e.cfg.Bundle()
	if err != nil {
		return nil, err
	}
	var items []*yaml.RNode
	for _, d := range b.Documents() {
		items = append(items, d.Node().Copy())
	}
	return items, nil
}

// resourceList is the standard input of a function: items and the config.
func resourceList(config *yaml.RNode, items []*yaml.RNode) ([]byte, error) {
	var b strings.Builder
	w := kio.ByteWriter{
		Writer:             &b,
		WrappingKind:       kio.ResourceListKind,
		WrappingAPIVersion: kio.ResourceListAPIVersion,
		FunctionConfig:     config,
	}
	if err := w.Write(items); err != nil {
		return nil, fmt.Errorf("writing the ResourceList: %w", err)
	}
	return []byte(b.String()), nil
}

// writeOutput writes output documents (a YAML stream or a ResourceList)
// into the sink directory as upstream's sink does (a file per document,
// named after its kind and name unless it says its path), or to w. No
// file lands outside root (the site directory), through .. or a symbolic
// link: the documents are written to a staging directory first, then
// copied in with each path checked.
func writeOutput(data []byte, sink, root string, w io.Writer) (n int, err error) {
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(data))}).Read()
	if err != nil {
		return 0, fmt.Errorf("reading the output documents: %w", err)
	}
	if sink == "" {
		return len(nodes), kio.ByteWriter{Writer: w}.Write(nodes)
	}
	if len(nodes) == 0 {
		return 0, nil
	}
	if err := resolvesWithin(sink, root); err != nil {
		return 0, fmt.Errorf("spec.sinkOutputDir: %w", err)
	}
	staging, err := os.MkdirTemp("", "airship-output-")
	if err != nil {
		return 0, err
	}
	defer func() {
		// The staged documents may hold secrets: a failed removal is
		// reported.
		if rerr := os.RemoveAll(staging); rerr != nil {
			err = errors.Join(err, fmt.Errorf("removing %s: %w", staging, rerr))
		}
	}()
	if err := (kio.LocalPackageWriter{PackagePath: staging}).Write(nodes); err != nil {
		return 0, fmt.Errorf("writing the output to %s: %w", sink, err)
	}
	if err := writeConfined(staging, sink, root); err != nil {
		return 0, fmt.Errorf("writing the output to %s: %w", sink, err)
	}
	return len(nodes), nil
}

func (e *Executor) stdout() io.Writer {
	if e.Stdout != nil {
		return e.Stdout
	}
	return os.Stdout
}

// API returns the decoded executor document.
func (e *Executor) API() *v1.GenericContainer { return e.api }
