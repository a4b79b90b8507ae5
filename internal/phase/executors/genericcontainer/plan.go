package genericcontainer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/document/fn"
)

// Mode is how an image runs.
type Mode string

// Modes.
const (
	// ModeBuiltin runs a built-in KRM function in process.
	ModeBuiltin Mode = "built-in"
	// ModeScript runs a toolbox image's script with the local shell.
	ModeScript Mode = "local-script"
	// ModeRuntime runs the image with a container runtime.
	ModeRuntime Mode = "container-runtime"
)

// Runtimes are the container runtimes looked for on PATH, in order.
var Runtimes = []string{"docker", "podman"}

// Environment upstream's containers and toolbox function set.
const (
	// EnvKubeconfig points at the phase cluster's kubeconfig.
	EnvKubeconfig = "KUBECONFIG"
	// EnvContext is the kubeconfig context of the phase's cluster.
	EnvContext = "KCTL_CONTEXT"
	// EnvBundlePath is the file holding the phase's documents (toolbox).
	EnvBundlePath = "RENDERED_BUNDLE_PATH"
	// containerKubeconfig is where a container finds the kubeconfig.
	containerKubeconfig = "/kubeconfig"
	// scriptKey is the config data key holding a toolbox script.
	scriptKey = "script"
)

// The toolbox function's filters of RENDERED_BUNDLE_PATH, read from envVars.
const (
	envGroupFilter   = "RESOURCE_GROUP_FILTER"
	envVersionFilter = "RESOURCE_VERSION_FILTER"
	envKindFilter    = "RESOURCE_KIND_FILTER"
	envLabelFilter   = "RESOURCE_LABEL_FILTER"
)

// toolboxImages are the repositories (last path element) of Airship's
// toolbox function images: a KRM function that runs its config's script.
var toolboxImages = []string{"toolbox", "toolbox-virsh"}

// EnvVar is one variable given to the image.
type EnvVar struct {
	Name string `json:"name"`
	// Value is the value; empty with FromEnv.
	Value string `json:"value,omitempty"`
	// FromEnv: the value is taken from airshipctl's environment (envVars
	// entry without =); it is never shown.
	FromEnv bool `json:"fromEnvironment,omitempty"`
}

// String shows the variable as render prints it: NAME=value, or NAME (from
// the environment) without its value.
func (e EnvVar) String() string {
	if e.FromEnv {
		return e.Name + " (from the environment)"
	}
	return e.Name + "=" + e.Value
}

// Plan is what a run does, worked out from the spec before anything runs.
type Plan struct {
	Image string
	Type  v1.GenericContainerType
	Mode  Mode
	// Builtin names the built-in function (ModeBuiltin).
	Builtin string
	// Runtime is the runtime binary found on PATH (ModeRuntime), "" when none.
	Runtime string
	// Args are the runtime's arguments (ModeRuntime), the image included.
	Args []string
	// Env is what the image gets beyond the base environment.
	Env []EnvVar
	// Mounts have their sources expanded (~, relative to the target path).
	Mounts []v1.StorageMount
	// Sink is the absolute output directory, "" to print the output.
	Sink string
	// siteDir is the site directory the output is confined to.
	siteDir string
	// Timeout bounds the run; 0 means none.
	Timeout time.Duration
	// Kubeconfig is true when the phase has a cluster whose kubeconfig the
	// image gets; Context is its context.
	Kubeconfig bool
	Context    string
}

// planInput is what a plan is made from.
type planInput struct {
	spec v1.GenericContainerSpec
	// cluster is the phase's cluster, "" for none.
	cluster string
	// targetPath resolves relative mount sources; siteDir resolves sinkOutputDir.
	targetPath, siteDir string
	// kubeconfigPath is the host path of the kubeconfig copy (a
	// placeholder when rendering).
	kubeconfigPath string
	lookPath       func(string) (string, error)
	home           string
	uid, gid       int
	// passEnv are the names $AIRSHIP_PASS_ENV lets name-only entries take.
	passEnv []string
}

// makePlan decides how the spec runs.
func makePlan(in planInput) (*Plan, error) {
	s := in.spec
	p := &Plan{
		Image:   s.Image,
		Type:    s.Type,
		Timeout: time.Duration(s.Timeout) * time.Second,
		Context: in.cluster,
	}
	if p.Type == "" {
		p.Type = v1.GenericContainerTypeAirship
	}
	p.Kubeconfig = in.cluster != ""
	p.siteDir = in.siteDir
	if s.SinkOutputDir != "" {
		sink, err := confinedSink(in.siteDir, s.SinkOutputDir)
		if err != nil {
			return nil, err
		}
		p.Sink = sink
	}
	for _, m := range s.StorageMounts {
		m.Src = expandSource(m.Src, in.home, in.targetPath)
		p.Mounts = append(p.Mounts, m)
	}
	for i, e := range s.EnvVars {
		if err := checkEnvVar(e, in.passEnv); err != nil {
			return nil, fmt.Errorf("spec.envVars[%d] %q: %w", i, e, err)
		}
		name, value, ok := strings.Cut(e, "=")
		p.Env = append(p.Env, EnvVar{Name: name, Value: value, FromEnv: !ok})
	}
	// A command of its own replaces the image's function: only the image
	// itself can run it.
	customCmd := p.Type == v1.GenericContainerTypeAirship && len(s.Airship.Cmd) > 0
	switch name, builtin := fn.BuiltinImage(s.Image); {
	case builtin && !customCmd:
		p.Mode, p.Builtin = ModeBuiltin, name
	case isToolbox(s.Image) && !customCmd:
		p.Mode = ModeScript
	default:
		p.Mode = ModeRuntime
		runtimes := Runtimes
		if s.Airship.ContainerRuntime != "" {
			runtimes = []string{s.Airship.ContainerRuntime}
		}
		for _, r := range runtimes {
			if _, err := in.lookPath(r); err == nil {
				p.Runtime = r
				break
			}
		}
		p.Args = runtimeArgs(p, s, in)
	}
	return p, nil
}

// runtimeArgs is the runtime's command line, as upstream's container
// client and kustomize's function runner build it.
func runtimeArgs(p *Plan, s v1.GenericContainerSpec, in planInput) []string {
	args := []string{"run", "--rm", "-i"}
	if p.Type == v1.GenericContainerTypeKrm {
		network := "none"
		if s.HostNetwork {
			network = "host"
		}
		args = append(args, "--network", network,
			"--user", strconv.Itoa(in.uid)+":"+strconv.Itoa(in.gid),
			"--security-opt=no-new-privileges")
	} else {
		if s.HostNetwork {
			args = append(args, "--network", "host")
		}
		if s.Airship.Privileged {
			args = append(args, "--privileged")
		}
	}
	mounts := p.Mounts
	if p.Kubeconfig {
		mounts = append(mounts[:len(mounts):len(mounts)], v1.StorageMount{MountType: "bind", Src: in.kubeconfigPath, DstPath: containerKubeconfig})
	}
	for _, m := range mounts {
		typ := m.MountType
		if typ == "" {
			typ = "bind"
		}
		spec := "type=" + typ + ",source=" + m.Src + ",target=" + m.DstPath
		if !m.ReadWriteMode {
			spec += ",readonly"
		}
		args = append(args, "--mount", spec)
	}
	for _, e := range containerEnv(p) {
		if e.FromEnv {
			args = append(args, "-e", e.Name)
		} else {
			args = append(args, "-e", e.Name+"="+e.Value)
		}
	}
	args = append(args, s.Image)
	if p.Type == v1.GenericContainerTypeAirship {
		args = append(args, s.Airship.Cmd...)
	}
	return args
}

// containerEnv is envVars plus, with a cluster, the kubeconfig variables
// upstream appends.
func containerEnv(p *Plan) []EnvVar {
	env := append([]EnvVar(nil), p.Env...)
	if p.Kubeconfig {
		env = append(env, EnvVar{Name: EnvKubeconfig, Value: containerKubeconfig}, EnvVar{Name: EnvContext, Value: p.Context})
	}
	return env
}

// expandSource resolves a mount source as upstream does: ~ is the home
// directory, and a relative path is relative to the target path.
func expandSource(src, home, targetPath string) string {
	switch {
	case src == "~":
		return home
	case strings.HasPrefix(src, "~/"):
		return filepath.Join(home, src[2:])
	case src == "" || filepath.IsAbs(src):
		return src
	}
	return filepath.Join(targetPath, src)
}

// isToolbox reports whether an image is one of Airship's toolbox images,
// whatever its registry and tag.
func isToolbox(image string) bool {
	repo := fn.ImageRepository(image)
	base := repo[strings.LastIndex(repo, "/")+1:]
	for _, t := range toolboxImages {
		if base == t {
			return true
		}
	}
	return false
}

// noRuntimeError is the error of a run that needs a runtime none of which
// is on PATH.
func noRuntimeError(image string, looked []string) error {
	return fmt.Errorf("image %s needs a container runtime, and none was found on PATH (looked for %s); "+
		"only the built-in functions (templater, replacement-transformer, sops) and Airship's toolbox images run without one",
		image, strings.Join(looked, ", "))
}

// defaultPlanInput fills in the host's facts.
func defaultPlanInput(in planInput) planInput {
	if in.lookPath == nil {
		in.lookPath = exec.LookPath
	}
	if in.home == "" {
		in.home, _ = os.UserHomeDir()
	}
	if in.uid == 0 && in.gid == 0 {
		in.uid, in.gid = os.Getuid(), os.Getgid()
	}
	if in.siteDir == "" {
		in.siteDir = in.targetPath
	}
	if in.passEnv == nil {
		in.passEnv = passEnvAllowed(os.Getenv)
	}
	return in
}
