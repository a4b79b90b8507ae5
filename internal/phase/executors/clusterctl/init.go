package clusterctl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	ctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	ctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// initEntry is one provider init-options asks for.
type initEntry struct {
	name, version string
	typ           clusterctlv1.ProviderType
}

var semverRE = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

// initEntries lists the providers of init-options, each with its version.
func (e *Executor) initEntries() ([]initEntry, error) {
	o := e.api.InitOptions
	var out []initEntry
	var errs []string
	add := func(field string, typ clusterctlv1.ProviderType, entries ...string) {
		for _, entry := range entries {
			if entry == "" {
				continue
			}
			name, version, _ := strings.Cut(entry, ":")
			if !semverRE.MatchString(version) {
				errs = append(errs, fmt.Sprintf("init-options.%s %q needs a version, as name:vX.Y.Z (offline init has no 'latest')", field, entry))
				continue
			}
			out = append(out, initEntry{name: name, version: version, typ: typ})
		}
	}
	add("core-provider", clusterctlv1.CoreProviderType, o.CoreProvider)
	add("bootstrap-providers", clusterctlv1.BootstrapProviderType, o.BootstrapProviders...)
	add("control-plane-providers", clusterctlv1.ControlPlaneProviderType, o.ControlPlaneProviders...)
	add("infrastructure-providers", clusterctlv1.InfrastructureProviderType, o.InfrastructureProviders...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s", e.cfg.ExecutorDoc.ID(), strings.Join(errs, "; "))
	}
	return out, nil
}

func (e *Executor) provider(name string, typ clusterctlv1.ProviderType) *v1.Provider {
	for _, p := range e.api.Providers {
		if p != nil && p.Name == name && p.Type == string(typ) {
			return p
		}
	}
	return nil
}

// writeRepository builds every provider init needs from the site tree into
// a clusterctl local repository: <dir>/<provider-label>/<version>/components.yaml
// and metadata.yaml, and registers it with the reader.
func (e *Executor) writeRepository(dir string, entries []initEntry, reader *ctlconfig.MemoryReader) error {
	for _, en := range entries {
		p := e.provider(en.name, en.typ)
		if p == nil {
			return fmt.Errorf("%s: providers has no %s named %q", e.cfg.ExecutorDoc.ID(), en.typ, en.name)
		}
		b, err := e.components(p, en.version)
		if err != nil {
			return err
		}
		data, err := b.YAML()
		if err != nil {
			return err
		}
		vdir := filepath.Join(dir, clusterctlv1.ManifestLabel(en.name, en.typ), en.version)
		components := filepath.Join(vdir, "components.yaml")
		if err := fileutil.WriteAtomic(components, data, 0o600); err != nil {
			return err
		}
		var major, minor int
		if _, err := fmt.Sscanf(en.version, "v%d.%d", &major, &minor); err != nil {
			return fmt.Errorf("provider %s version %s: %w", en.name, en.version, err)
		}
		meta := fmt.Sprintf("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: %d\n  minor: %d\n  contract: v1beta2\n", major, minor)
		if err := fileutil.WriteAtomic(filepath.Join(vdir, "metadata.yaml"), []byte(meta), 0o600); err != nil {
			return err
		}
		if _, err := reader.AddProvider(en.name, en.typ, "file://"+components); err != nil {
			return fmt.Errorf("provider %s: %w", en.name, err)
		}
	}
	return nil
}

// checkFirstRun refuses, before clusterctl tries to fetch them from the
// internet, an init into a cluster without a core provider that does not
// name bootstrap and control-plane providers: clusterctl adds kubeadm ones
// by default on a first run.
func (e *Executor) checkFirstRun(ctx context.Context, entries []initEntry) error {
	has := map[clusterctlv1.ProviderType]bool{}
	for _, en := range entries {
		has[en.typ] = true
	}
	if has[clusterctlv1.BootstrapProviderType] && has[clusterctlv1.ControlPlaneProviderType] {
		return nil
	}
	c, err := e.client(ctx, e.cfg.ClusterName)
	if err != nil {
		return err
	}
	inv, _, err := readInventory(ctx, c)
	if err != nil {
		return err
	}
	for _, p := range inv {
		if p.typ == clusterctlv1.CoreProviderType {
			return nil
		}
	}
	return fmt.Errorf("%s: cluster %q has no Cluster API core provider yet, and on a first init clusterctl also installs "+
		"bootstrap and control-plane providers (kubeadm unless named): add them to providers and to init-options."+
		"bootstrap-providers and init-options.control-plane-providers", e.cfg.ExecutorDoc.ID(), e.cfg.ClusterName)
}

// certManagerWait bounds clusterctl's check that cert-manager's API
// serves, and the wait for the namespace of the last check to go.
const certManagerWait = 2 * time.Minute

// certManagerCheckNamespace is where clusterctl creates, and then deletes,
// the objects it checks cert-manager's API with.
const certManagerCheckNamespace = "cert-manager-test"

// waitCertManagerCheck waits until the namespace of the last run's
// cert-manager check is gone (or not being deleted). clusterctl makes sure
// the namespace exists once and then retries only the objects in it, so a
// run started while it terminates would retry until its timeout, in a
// namespace that no longer exists.
func (e *Executor) waitCertManagerCheck(ctx context.Context) error {
	c, err := e.client(ctx, e.cfg.ClusterName)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, certManagerWait)
	defer cancel()
	for {
		ns := &corev1.Namespace{}
		err := c.Get(ctx, client.ObjectKey{Name: certManagerCheckNamespace}, ns)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil && ctx.Err() == nil:
			return fmt.Errorf("phase %q: reading namespace %s: %w", e.cfg.PhaseName, certManagerCheckNamespace, err)
		case err == nil && ns.DeletionTimestamp == nil:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("phase %q: namespace %s (where clusterctl checks cert-manager's API) is still being deleted on cluster %q after %s",
				e.cfg.PhaseName, certManagerCheckNamespace, e.cfg.ClusterName, certManagerWait)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runInit installs the providers of init-options into the phase's cluster
// from local repositories built with kustomize from the site tree, and
// waits for them. Nothing is fetched from the network.
func (e *Executor) runInit(ctx context.Context, opts executor.RunOptions) error {
	entries, err := e.initEntries()
	if err != nil {
		return err
	}
	if e.cfg.Kubeconfig == nil || e.cfg.ClusterName == "" {
		return fmt.Errorf("phase %q: clusterctl init needs metadata.clusterName and a kubeconfig for it", e.cfg.PhaseName)
	}
	dir, err := os.MkdirTemp("", "airship-clusterctl-")
	if err != nil {
		return err
	}
	defer func() {
		// The directory holds kubeconfig copies: the phase's outcome
		// stands, but the user is told when they stay behind.
		if err := os.RemoveAll(dir); err != nil && opts.Events != nil {
			opts.Events <- executor.Event{Type: "Warning", Message: err.Error()}
		}
	}()
	// clusterctl reads the cluster from a kubeconfig file: a private copy,
	// removed afterwards.
	kcPath, err := e.writeKubeconfig(ctx, dir, e.cfg.ClusterName)
	if err != nil {
		return err
	}
	if err := e.checkFirstRun(ctx, entries); err != nil {
		return err
	}
	if !opts.DryRun {
		if err := e.waitCertManagerCheck(ctx); err != nil {
			return err
		}
	}
	c, err := e.newClusterctl(ctx, filepath.Join(dir, "repository"), entries)
	if err != nil {
		return err
	}
	send := func(msg string) {
		if opts.Events != nil {
			opts.Events <- executor.Event{Type: "Init", Message: msg}
		}
	}
	init := ctlclient.InitOptions{
		Kubeconfig:          ctlclient.Kubeconfig{Path: kcPath, Context: e.cfg.ClusterName},
		WaitProviders:       true,
		WaitProviderTimeout: 5 * time.Minute,
	}
	if opts.Timeout > 0 {
		init.WaitProviderTimeout = opts.Timeout
	}
	for _, en := range entries {
		ref := en.name + ":" + en.version
		switch en.typ {
		case clusterctlv1.CoreProviderType:
			init.CoreProvider = ref
		case clusterctlv1.BootstrapProviderType:
			init.BootstrapProviders = append(init.BootstrapProviders, ref)
		case clusterctlv1.ControlPlaneProviderType:
			init.ControlPlaneProviders = append(init.ControlPlaneProviders, ref)
		case clusterctlv1.InfrastructureProviderType:
			init.InfrastructureProviders = append(init.InfrastructureProviders, ref)
		}
		send(fmt.Sprintf("installing %s %s from the site tree", en.typ, ref))
	}
	if opts.DryRun {
		send("dry run: components built and checked; nothing installed")
		return nil
	}
	if _, err := c.Init(ctx, init); err != nil {
		return fmt.Errorf("phase %q: clusterctl init on cluster %q: %w", e.cfg.PhaseName, e.cfg.ClusterName, err)
	}
	send(fmt.Sprintf("%d providers installed and available", len(entries)))
	return nil
}

// newClusterctl writes the local repository of entries into dir and returns
// a clusterctl client that reads only it, configured from the document:
//   - additional-vars (and, with env-vars, the environment, which
//     additional-vars override) are the values of ${VAR} in components;
//   - a provider with variable-substitution: true has its variables
//     substituted (one without a value or a ${VAR:=default} is an error
//     naming it); without it, its components are installed as built;
//   - images are clusterctl's image overrides, by component (the provider
//     label, e.g. cluster-api or infrastructure-metal3, "all", or
//     "<component>/<image name>").
func (e *Executor) newClusterctl(ctx context.Context, dir string, entries []initEntry) (ctlclient.Client, error) {
	reader := ctlconfig.NewMemoryReader()
	if err := e.writeRepository(dir, entries, reader); err != nil {
		return nil, err
	}
	// cert-manager is the site's to install (its API, or cert-manager
	// itself, through a phase before this one), never clusterctl's, which
	// would download it: clusterctl only checks that its API serves, and
	// retries the check instead of downloading.
	reader.Set("cert-manager", fmt.Sprintf("externallyProvisioned: \"true\"\ntimeout: %s\n", certManagerWait))
	if e.api.EnvVars {
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				reader.Set(k, v)
			}
		}
	}
	for k, v := range e.api.AdditionalComponentVariables {
		reader.Set(k, v)
	}
	if len(e.api.ImageMetas) > 0 {
		images, err := yaml.Marshal(e.api.ImageMetas)
		if err != nil {
			return nil, fmt.Errorf("%s: images: %w", e.cfg.ExecutorDoc.ID(), err)
		}
		reader.Set("images", string(images))
	}
	substitute := map[string]bool{}
	for _, p := range e.api.Providers {
		if p != nil && p.VariableSubstitution {
			substitute[clusterctlv1.ManifestLabel(p.Name, clusterctlv1.ProviderType(p.Type))] = true
		}
	}
	cfg, err := ctlconfig.New(ctx, "", ctlconfig.InjectReader(reader))
	if err != nil {
		return nil, fmt.Errorf("clusterctl configuration: %w", err)
	}
	factory := func(ctx context.Context, in ctlclient.RepositoryClientFactoryInput) (repository.Client, error) {
		rc, err := repository.New(ctx, in.Provider, cfg, repository.InjectYamlProcessor(in.Processor))
		if err != nil || substitute[in.Provider.ManifestLabel()] {
			return rc, err
		}
		return rawRepository{rc}, nil
	}
	c, err := ctlclient.New(ctx, "", ctlclient.InjectConfig(cfg), ctlclient.InjectRepositoryFactory(factory))
	if err != nil {
		return nil, fmt.Errorf("clusterctl client: %w", err)
	}
	return c, nil
}

// rawRepository hands out a provider's components as built: clusterctl's
// components client always substitutes variables unless told to skip it.
type rawRepository struct{ repository.Client }

func (r rawRepository) Components() repository.ComponentsClient {
	return rawComponents{r.Client.Components()}
}

type rawComponents struct{ repository.ComponentsClient }

func (c rawComponents) Get(ctx context.Context, o repository.ComponentsOptions) (repository.Components, error) {
	o.SkipTemplateProcess = true
	return c.ComponentsClient.Get(ctx, o)
}
