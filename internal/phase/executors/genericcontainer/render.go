package genericcontainer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// RunKind is the kind of the document render prints to describe a run.
// It is output only: no executor reads it.
const RunKind = "GenericContainerRun"

// runDoc is what render prints about a run, before the input documents.
type runDoc struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   map[string]string `json:"metadata"`
	Phase      string            `json:"phase"`
	Image      string            `json:"image"`
	Type       string            `json:"type"`
	// Runs is how: built-in, local-script or container-runtime.
	Runs    Mode     `json:"runs"`
	Builtin string   `json:"builtin,omitempty"`
	Runtime string   `json:"runtime,omitempty"`
	Command []string `json:"command,omitempty"`
	WorkDir string   `json:"workingDir,omitempty"`
	Env     []string `json:"env,omitempty"`
	Mounts  []string `json:"mounts,omitempty"`
	Stdin   string   `json:"stdin"`
	Output  string   `json:"output"`
	Timeout string   `json:"timeout,omitempty"`
	Script  string   `json:"script,omitempty"`
	// FunctionConfig is the config the function or script gets.
	FunctionConfig any `json:"functionConfig,omitempty"`
}

// Render prints what a run would do (a GenericContainerRun document:
// image, how it runs, its command line or script, environment, mounts,
// where the output goes) followed by the documents it would get. Values
// taken from the environment and the kubeconfig are not shown. The
// selector applies to every document printed.
func (e *Executor) Render(_ context.Context, w io.Writer, opts executor.RenderOptions) error {
	p, err := e.plan("")
	if err != nil {
		return err
	}
	config, err := e.config()
	if err != nil {
		return err
	}
	var docs []*document.Document
	if e.cfg.Bundle != nil {
		b, err := e.cfg.Bundle()
		if err != nil {
			return err
		}
		docs = b.Documents()
	}
	d := runDoc{
		APIVersion: v1.GroupVersion.String(), Kind: RunKind,
		Metadata: map[string]string{"name": e.api.Name},
		Phase:    e.cfg.PhaseName, Image: p.Image, Type: string(p.Type), Runs: p.Mode,
		Stdin: fmt.Sprintf("a ResourceList: functionConfig and the %d documents that follow", len(docs)),
	}
	if p.Timeout > 0 {
		d.Timeout = p.Timeout.String()
	}
	if config != nil {
		var v any
		if err := config.YNode().Decode(&v); err != nil {
			return fmt.Errorf("%s: config: %w", e.id, err)
		}
		d.FunctionConfig = v
	}
	for _, m := range p.Mounts {
		mode := "read-only"
		if m.ReadWriteMode {
			mode = "read-write"
		}
		d.Mounts = append(d.Mounts, fmt.Sprintf("%s -> %s (%s)", m.Src, m.DstPath, mode))
	}
	if err := e.describeRun(&d, p); err != nil {
		return err
	}
	y, err := yaml.Marshal(d)
	if err != nil {
		return err
	}
	run, err := document.FromYAML("(render of "+e.id+")", y)
	if err != nil {
		return err
	}
	all := append(run.Documents(), docs...)
	f, err := document.NewBundle(e.id, all).Filter(opts.Selector)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// describeRun fills in how the run of plan p happens, by its mode: the
// built-in function, the script (with its environment and the read-only
// copies it gets), or the container runtime's command line.
func (e *Executor) describeRun(d *runDoc, p *Plan) error {
	switch p.Mode {
	case ModeBuiltin:
		d.Builtin = p.Builtin
		d.Output = outputText(p.Sink, "printed")
	case ModeScript:
		script, err := e.script()
		if err != nil {
			return err
		}
		d.Script = script
		d.Command = []string{"bash", "script.sh"}
		d.WorkDir = "a new temporary directory, removed afterwards"
		d.Env = scriptEnvShown(p)
		d.Output = outputText(p.Sink, "the log (standard output and error)")
		for i, m := range p.Mounts {
			if m.ReadWriteMode || m.Src == "" || (m.MountType != "" && m.MountType != "bind") {
				d.Mounts[i] += ": no container; envVars values under the container path name the host path"
			} else {
				d.Mounts[i] += ": no container; envVars values under the container path name a read-only copy of the host path, made for the run"
			}
		}
	default:
		d.Runtime = p.Runtime
		name := p.Runtime
		if name == "" {
			looked := Runtimes
			if r := e.api.Spec.Airship.ContainerRuntime; r != "" {
				looked = []string{r}
			}
			d.Runtime = "none found on PATH (looked for " + strings.Join(looked, ", ") + "): a run fails"
			name = looked[0]
		}
		d.Command = append([]string{name}, p.Args...)
		for _, ev := range containerEnv(p) {
			d.Env = append(d.Env, ev.String())
		}
		d.Output = outputText(p.Sink, "printed")
	}
	return nil
}

// scriptEnvShown is the script's environment as render shows it: what
// the spec and upstream's toolbox give, without values from the
// environment or the kubeconfig's contents.
func scriptEnvShown(p *Plan) []string {
	var out []string
	out = append(out, "PATH=(airshipctl's directory, then $PATH)")
	for _, v := range p.Env {
		if v.FromEnv {
			out = append(out, v.String())
			continue
		}
		out = append(out, v.Name+"="+mountedPath(v.Value, p.Mounts))
	}
	if p.Kubeconfig {
		out = append(out, EnvKubeconfig+"=(a private 0600 copy of cluster "+p.Context+"'s kubeconfig, removed afterwards)",
			EnvContext+"="+p.Context)
	}
	return append(out, EnvBundlePath+"=bundle.yaml (the documents that follow, narrowed by RESOURCE_*_FILTER)")
}

func outputText(sink, otherwise string) string {
	if sink != "" {
		return "written to " + sink
	}
	return otherwise
}
