package clusterctl_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/apply"
	"github.com/airshipit/airship-go/internal/config"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/phase/executors"
	"github.com/airshipit/airship-go/internal/phase/executors/clusterctl"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

func writeSite(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func loadPhase(t *testing.T, dir, name string) (*phase.Site, *phase.Phase) {
	t.Helper()
	cfg, err := config.Load(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	executors.Register()
	s, err := phase.Load(cfg, "", document.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Phase(name)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

const phases = `apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: clusterctl-init, clusterName: mgmt}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: Clusterctl, name: init}
---
apiVersion: airshipit.org/v1alpha1
kind: Clusterctl
metadata: {name: init}
action: init
providers:
- name: cluster-api
  type: CoreProvider
  url: site/providers/capi
  variable-substitution: true
- name: kubeadm
  type: BootstrapProvider
  url: site/providers/cabpk
  variable-substitution: true
- name: kubeadm
  type: ControlPlaneProvider
  url: site/providers/kcp
  variable-substitution: true
init-options:
  core-provider: CORE
  bootstrap-providers: [BOOTSTRAP]
  control-plane-providers: [CONTROLPLANE]
---
apiVersion: airshipit.org/v1alpha1
kind: ClusterMap
metadata: {name: m}
map:
  mgmt:
    kubeconfigSources:
    - type: filesystem
      filesystem: {path: KUBECONFIG, contextName: CONTEXT}
`

// TestInitCoreProviderFromSiteTree installs Cluster API's real core
// provider components (built with kustomize from the module's
// core/config/default, through the site tree) with clusterctl's library,
// offline, into the local control plane, and waits for it.
func TestInitCoreProviderFromSiteTree(t *testing.T) {
	capi := capienv.ModuleDir(t)
	env := testenv.StartFull(t, testenv.Options{Nodes: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, crd := range capienv.CertManagerStubs() {
		if err := env.Client.Create(ctx, crd); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	rel := func(provider, module string) string {
		r, err := filepath.Rel(filepath.Join(dir, "site", "providers", provider), filepath.Join(capi, module, "config", "default"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ph := strings.NewReplacer("CORE", "cluster-api:v1.14.2", "BOOTSTRAP", "kubeadm:v1.14.2", "CONTROLPLANE", "kubeadm:v1.14.2",
		"KUBECONFIG", env.Kubeconfig, "CONTEXT", raw.CurrentContext).Replace(phases)
	writeSite(t, dir, map[string]string{
		"config": "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: c\ncontexts: {c: {manifest: m}}\n" +
			"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n",
		"site/metadata.yaml":                      "phase: {path: phases}\n",
		"site/phases/kustomization.yaml":          "resources: [phases.yaml]\n",
		"site/phases/phases.yaml":                 ph + newerInit,
		"site/providers/capi/kustomization.yaml":  "resources:\n- " + rel("capi", "core") + "\n",
		"site/providers/cabpk/kustomization.yaml": "resources:\n- " + rel("cabpk", "bootstrap/kubeadm") + "\n",
		"site/providers/kcp/kustomization.yaml":   "resources:\n- " + rel("kcp", "controlplane/kubeadm") + "\n",
	})
	site, p := loadPhase(t, dir, "clusterctl-init")
	if err := site.CheckPhase(ctx, p); err != nil {
		t.Fatal(err)
	}
	ex, err := site.Executor(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := runLogged(ctx, t, ex, ""); err != nil {
		t.Fatal(err)
	}

	var crd apiextensionsv1.CustomResourceDefinition
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "clusters.cluster.x-k8s.io"}, &crd); err != nil {
		t.Fatalf("Cluster API CRDs not installed: %v", err)
	}
	var dep appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "capi-system", Name: "capi-controller-manager"}, &dep); err != nil {
		t.Fatalf("core provider Deployment: %v", err)
	}
	if dep.Status.AvailableReplicas < 1 {
		t.Errorf("core provider Deployment not available: %+v", dep.Status)
	}
	inv := &unstructured.UnstructuredList{}
	inv.SetAPIVersion("clusterctl.cluster.x-k8s.io/v1alpha3")
	inv.SetKind("ProviderList")
	if err := env.Client.List(ctx, inv); err != nil {
		t.Fatal(err)
	}
	if len(inv.Items) != 3 {
		t.Fatalf("clusterctl provider inventory: %d items, want 3", len(inv.Items))
	}
	for _, it := range inv.Items {
		if v, _, _ := unstructured.NestedString(it.Object, "version"); v != "v1.14.2" {
			t.Errorf("inventory %s version %q", it.GetName(), v)
		}
	}

	// Run again at once, while the namespace clusterctl checked
	// cert-manager's API in is still terminating (held here by a
	// finalizer, let go a few seconds into the run): clusterctl waits for
	// it rather than downloading cert-manager.
	held := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cert-manager-test", Finalizers: []string{"airshipit.org/test-hold"}}}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		// The first run's is gone, or it is ours from the start.
		err := env.Client.Create(ctx, held.DeepCopy())
		return err == nil, client.IgnoreAlreadyExists(err)
	}); err != nil {
		t.Fatalf("creating namespace cert-manager-test: %v", err)
	}
	if err := env.Client.Delete(ctx, held); err != nil {
		t.Fatal(err)
	}
	release := time.AfterFunc(3*time.Second, func() {
		if err := env.Client.Patch(ctx, held, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
			t.Errorf("releasing namespace cert-manager-test: %v", err)
		}
	})
	defer release.Stop()
	if err := runLogged(ctx, t, ex, "again "); err != nil {
		t.Fatalf("init again with cert-manager-test terminating: %v", err)
	}

	// Status of the phase that ran, and of one asking for other versions.
	tests := []struct {
		phase        string
		ready, drift bool
		message      string
	}{
		{"clusterctl-init", true, false, "capi-controller-manager 1/1 available"},
		{"clusterctl-init-newer", true, true, "version v1.14.2 installed, v1.15.0 wanted"},
	}
	for _, tt := range tests {
		t.Run("status "+tt.phase, func(t *testing.T) {
			site, p := loadPhase(t, dir, tt.phase)
			ex, err := site.Executor(p)
			if err != nil {
				t.Fatal(err)
			}
			st, err := ex.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Objects) != 3 {
				t.Fatalf("status = %+v, want 3 providers", st)
			}
			for _, o := range st.Objects {
				t.Logf("%+v", o)
				if !o.Applied || o.Ready != tt.ready || o.Drifted != tt.drift {
					t.Errorf("%s: applied=%v ready=%v drifted=%v, want true %v %v", o.ID, o.Applied, o.Ready, o.Drifted, tt.ready, tt.drift)
				}
			}
			if o := st.Objects[0]; o.ID != "CoreProvider/cluster-api" || !strings.Contains(o.Message, tt.message) {
				t.Errorf("core provider status %+v, want a message with %q", o, tt.message)
			}
		})
	}
}

// runLogged runs ex (3 minutes at most), logging its events with prefix.
func runLogged(ctx context.Context, t *testing.T, ex executor.Executor, prefix string) error {
	t.Helper()
	events := make(chan executor.Event, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range events {
			t.Logf("%s%s: %s", prefix, e.Type, e.Message)
		}
	}()
	err := ex.Run(ctx, executor.RunOptions{Timeout: 3 * time.Minute, Events: events})
	close(events)
	<-done
	return err
}

// newerInit asks for versions other than the ones installed, for Status.
const newerInit = `---
apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: clusterctl-init-newer, clusterName: mgmt}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: Clusterctl, name: init-newer}
---
apiVersion: airshipit.org/v1alpha1
kind: Clusterctl
metadata: {name: init-newer}
action: init
providers:
- {name: cluster-api, type: CoreProvider, url: site/providers/capi}
- {name: kubeadm, type: BootstrapProvider, url: site/providers/cabpk}
- {name: kubeadm, type: ControlPlaneProvider, url: site/providers/kcp}
init-options:
  core-provider: cluster-api:v1.15.0
  bootstrap-providers: [kubeadm:v1.15.0]
  control-plane-providers: [kubeadm:v1.15.0]
`

func TestInitBadInput(t *testing.T) {
	tests := []struct {
		name, core, url, want string
	}{
		{"no version", "cluster-api", "site/providers/capi", `init-options.core-provider "cluster-api" needs a version`},
		{"network url", "cluster-api:v1.14.2", "https://github.com/kubernetes-sigs/cluster-api/releases/latest/core-components.yaml", "come from the site tree, not the network"},
		{"missing dir", "cluster-api:v1.14.2", "site/providers/none", "is not a directory"},
		{"root that does not build", "cluster-api:v1.14.2", "site/providers/broken", "providers[0] (cluster-api).url: provider cluster-api (CoreProvider) components from "},
		{"unknown provider", "kubeadm:v1.14.2", "site/providers/capi", `providers has no CoreProvider named "kubeadm"`},
		{"missing versions dir", "cluster-api:v1.14.2", "site/providers/capi\n  versions: {v1.14.2: site/providers/none}", "(cluster-api).versions[v1.14.2]:"},
		{"network versions path", "cluster-api:v1.14.2", "site/providers/capi\n  versions: {v1.14.2: 'https://example.invalid/c.yaml'}", "not the network"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ph := strings.NewReplacer("CORE", tt.core, "BOOTSTRAP", "kubeadm:v1.14.2", "CONTROLPLANE", "kubeadm:v1.14.2",
				"KUBECONFIG", "/nonexistent", "CONTEXT", "x", "url: site/providers/capi", "url: "+tt.url).Replace(phases)
			writeSite(t, dir, map[string]string{
				"config": "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: c\ncontexts: {c: {manifest: m}}\n" +
					"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n",
				"site/metadata.yaml":                      "phase: {path: phases}\n",
				"site/phases/kustomization.yaml":          "resources: [phases.yaml]\n",
				"site/phases/phases.yaml":                 ph,
				"site/providers/capi/kustomization.yaml":  "resources: []\n",
				"site/providers/cabpk/kustomization.yaml": "resources: []\n",
				"site/providers/kcp/kustomization.yaml":   "resources: []\n",
				// A kustomization over a tree that is not there.
				"site/providers/broken/kustomization.yaml": "resources: [../upstream/core/config/default]\n",
			})
			site, p := loadPhase(t, dir, "clusterctl-init")
			err := site.CheckPhase(context.Background(), p)
			if err == nil {
				ex, xerr := site.Executor(p)
				if xerr != nil {
					t.Fatal(xerr)
				}
				err = ex.Run(context.Background(), executor.RunOptions{DryRun: true})
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

const twoClusterPhases = `apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: init-ephemeral, clusterName: ephemeral}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: Clusterctl, name: init}
---
apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: init-target, clusterName: target}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: Clusterctl, name: init}
---
apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: move, clusterName: target}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: Clusterctl, name: move}
---
apiVersion: airshipit.org/v1alpha1
kind: Clusterctl
metadata: {name: move}
action: move
move-options: {namespace: default}
---
apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: move-two, clusterName: target}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: Clusterctl, name: move-two}
---
apiVersion: airshipit.org/v1alpha1
kind: Clusterctl
metadata: {name: move-two}
action: move
move-options: {namespace: hosts, namespaces: [tenant]}
---
apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: apply-tenant, clusterName: ephemeral}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: KubernetesApply, name: apply-tenant}
  documentEntryPoint: apply-tenant
---
# As sip-ephemeral does for its SIPCluster: apply, then wait until it says
# it is ready (it never would once its hosts are gone).
apiVersion: airshipit.org/v1alpha1
kind: KubernetesApply
metadata: {name: apply-tenant}
config:
  waitOptions:
    timeout: 600
    conditions:
    - {apiVersion: v1, kind: ConfigMap, jsonPath: '{.data.ready}', value: "yes"}
---
apiVersion: airshipit.org/v1alpha1
kind: Clusterctl
metadata: {name: init}
action: init
providers:
- {name: cluster-api, type: CoreProvider, url: site/providers/capi}
- {name: kubeadm, type: BootstrapProvider, url: site/providers/cabpk}
- {name: kubeadm, type: ControlPlaneProvider, url: site/providers/kcp}
init-options:
  core-provider: cluster-api:v1.14.2
  bootstrap-providers: [kubeadm:v1.14.2]
  control-plane-providers: [kubeadm:v1.14.2]
---
apiVersion: airshipit.org/v1alpha1
kind: ClusterMap
metadata: {name: m}
map:
  ephemeral:
    kubeconfigSources:
    - type: filesystem
      filesystem: {path: EPHEMERAL_KUBECONFIG, contextName: EPHEMERAL_CONTEXT}
  target:
    parent: ephemeral
    kubeconfigSources:
    - type: filesystem
      filesystem: {path: TARGET_KUBECONFIG, contextName: TARGET_CONTEXT}
`

// TestMoveBetweenTwoAPIServers installs the providers on two local
// control planes and moves an object marked for clusterctl move from the
// parent to the target with clusterctl's library; then two namespaces in
// one phase, stopped half-way and finished by a second run.
func TestMoveBetweenTwoAPIServers(t *testing.T) {
	capi := capienv.ModuleDir(t)
	ephemeral := testenv.StartFull(t, testenv.Options{Nodes: 1})
	target := testenv.StartFull(t, testenv.Options{Nodes: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	contexts := map[string]string{}
	for name, env := range map[string]*testenv.Env{"EPHEMERAL": ephemeral, "TARGET": target} {
		for _, crd := range capienv.CertManagerStubs() {
			if err := env.Client.Create(ctx, crd); err != nil {
				t.Fatal(err)
			}
		}
		raw, err := clientcmd.LoadFromFile(env.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		contexts[name+"_KUBECONFIG"] = env.Kubeconfig
		contexts[name+"_CONTEXT"] = raw.CurrentContext
	}
	dir := t.TempDir()
	rel := func(provider, module string) string {
		r, err := filepath.Rel(filepath.Join(dir, "site", "providers", provider), filepath.Join(capi, module, "config", "default"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var pairs []string
	for k, v := range contexts {
		pairs = append(pairs, k, v)
	}
	writeSite(t, dir, map[string]string{
		"config": "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: c\ncontexts: {c: {manifest: m}}\n" +
			"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n",
		"site/metadata.yaml":                      "phase: {path: phases}\n",
		"site/phases/kustomization.yaml":          "resources: [phases.yaml]\n",
		"site/phases/phases.yaml":                 strings.NewReplacer(pairs...).Replace(twoClusterPhases),
		"site/providers/capi/kustomization.yaml":  "resources:\n- " + rel("capi", "core") + "\n",
		"site/providers/cabpk/kustomization.yaml": "resources:\n- " + rel("cabpk", "bootstrap/kubeadm") + "\n",
		"site/providers/kcp/kustomization.yaml":   "resources:\n- " + rel("kcp", "controlplane/kubeadm") + "\n",
		"site/apply-tenant/kustomization.yaml":    "resources: [picked.yaml]\n",
		"site/apply-tenant/picked.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: picked, namespace: tenant}\ndata: {ready: \"no\", changed: \"yes\"}\n",
	})
	run := func(name string) error {
		site, p := loadPhase(t, dir, name)
		if err := site.CheckPhase(ctx, p); err != nil {
			return err
		}
		ex, err := site.Executor(p)
		if err != nil {
			return err
		}
		return ex.Run(ctx, executor.RunOptions{Timeout: 3 * time.Minute})
	}
	for _, ph := range []string{"init-ephemeral", "init-target"} {
		if err := run(ph); err != nil {
			t.Fatalf("%s: %v", ph, err)
		}
	}
	moved := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "site-credentials", Namespace: "default",
		Labels: map[string]string{"clusterctl.cluster.x-k8s.io/move": ""},
	}, StringData: map[string]string{"token": "not-a-real-secret"}}
	stays := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "local-only", Namespace: "default"}}
	for _, s := range []*corev1.Secret{moved, stays} {
		if err := ephemeral.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := run("move"); err != nil {
		t.Fatalf("move: %v", err)
	}
	var got corev1.Secret
	if err := target.Client.Get(ctx, client.ObjectKeyFromObject(moved), &got); err != nil {
		t.Fatalf("moved Secret not on the target: %v", err)
	}
	if string(got.Data["token"]) != "not-a-real-secret" {
		t.Errorf("moved Secret lost its data")
	}
	if err := ephemeral.Client.Get(ctx, client.ObjectKeyFromObject(moved), &got); err == nil {
		t.Error("moved Secret is still on the parent")
	}
	if err := target.Client.Get(ctx, client.ObjectKeyFromObject(stays), &got); err == nil {
		t.Error("an unmarked Secret was moved")
	}

	t.Run("two namespaces, stopped half-way, then finished", func(t *testing.T) {
		moveStoppedHalfWay(ctx, t, dir, ephemeral, target)
	})
}

// moveStoppedHalfWay moves namespaces hosts and tenant in one phase
// (move-two) and stops it after hosts moved: tenant stays marked being
// moved, so a phase of the source applying to it (apply-tenant, which
// would wait for ever) neither changes it nor waits; the phase's status
// says how to finish, and running it again moves tenant and marks both
// moved.
func moveStoppedHalfWay(ctx context.Context, t *testing.T, dir string, ephemeral, target *testenv.Env) {
	movable := map[string]string{"clusterctl.cluster.x-k8s.io/move": ""}
	bmc := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bmc", Namespace: "hosts", Labels: movable}, StringData: map[string]string{"password": "not-a-real-one"}}
	picked := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "picked", Namespace: "tenant", Labels: movable}, Data: map[string]string{"ready": "no"}}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hosts"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}}, bmc, picked,
	} {
		if err := ephemeral.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	pickedVersion := picked.ResourceVersion
	executorOf := func(name string) executor.Executor {
		t.Helper()
		site, p := loadPhase(t, dir, name)
		if err := site.CheckPhase(ctx, p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ex, err := site.Executor(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return ex
	}
	runSaying := func(ex executor.Executor) ([]string, error) {
		events := make(chan executor.Event, 64)
		err := ex.Run(ctx, executor.RunOptions{Events: events})
		close(events)
		var said []string
		for ev := range events {
			said = append(said, ev.Message)
		}
		return said, err
	}
	on := func(env *testenv.Env, o client.Object) bool {
		t.Helper()
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	annotations := func(ns string) map[string]string {
		t.Helper()
		n := &corev1.Namespace{}
		if err := ephemeral.Client.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
			t.Fatal(err)
		}
		return n.Annotations
	}

	ex := executorOf("move-two")
	clusterctl.StopBeforeMoving(ex, "tenant")
	_, err := runSaying(ex)
	for _, want := range []string{`phase "move-two"`, `namespace "tenant"`, `from "ephemeral" to "target"`, "stopped before moving", `run phase "move-two" again`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("move stopped half-way: error %v, want one saying %q", err, want)
		}
	}
	if !on(target, bmc) || on(ephemeral, bmc) || on(target, picked) || !on(ephemeral, picked) {
		t.Fatalf("after the stop: bmc on target %v, on ephemeral %v; picked on target %v, on ephemeral %v; want hosts moved and tenant not",
			on(target, bmc), on(ephemeral, bmc), on(target, picked), on(ephemeral, picked))
	}
	if a := annotations("hosts"); a[apply.MovedToAnnotation] != "target" || a[apply.MovingToAnnotation] != "" {
		t.Errorf("hosts annotations %v, want marked moved to target only", a)
	}
	if a := annotations("tenant"); a[apply.MovingToAnnotation] != "target" || a[apply.MovingPhaseAnnotation] != "move-two" || a[apply.MovedToAnnotation] != "" {
		t.Errorf("tenant annotations %v, want marked being moved to target by move-two", a)
	}
	st, err := executorOf("move-two").Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Objects) != 2 || !st.Objects[0].Ready || st.Objects[1].ID != "Namespace tenant" || st.Objects[1].Ready ||
		!strings.Contains(st.Objects[1].Message, `run phase "move-two" again`) || !strings.Contains(st.Message, "stopped half-way") {
		t.Errorf("status after the stop = %+v, want hosts ready, tenant being moved and how to finish", st)
	}

	// The source's phase leaves the namespace being moved alone, at once.
	start := time.Now()
	said, err := runSaying(executorOf("apply-tenant"))
	if err != nil {
		t.Fatalf("apply-tenant over the namespace being moved: %v", err)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("apply-tenant took %s: it waited on the namespace being moved", took)
	}
	if !slices.ContainsFunc(said, func(m string) bool {
		return strings.Contains(m, `namespace "tenant" being moved to cluster "target"`) && strings.Contains(m, `run phase "move-two" again`)
	}) {
		t.Errorf("apply-tenant said %q, want that tenant is being moved and how to finish", said)
	}
	got := &corev1.ConfigMap{}
	if err := ephemeral.Client.Get(ctx, client.ObjectKeyFromObject(picked), got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != pickedVersion || got.Data["changed"] != "" {
		t.Errorf("apply-tenant changed the ConfigMap of the namespace being moved: %v", got.Data)
	}

	// Run again, the phase moves what is left and marks both.
	said, err = runSaying(executorOf("move-two"))
	if err != nil {
		t.Fatalf("move-two again: %v", err)
	}
	for _, want := range []string{`namespace "hosts" of "ephemeral" was moved to "target" already`, `finishing the move of the Cluster API objects of namespace "tenant"`} {
		if !slices.ContainsFunc(said, func(m string) bool { return strings.Contains(m, want) }) {
			t.Errorf("move-two again said %q, want %q", said, want)
		}
	}
	if !on(target, bmc) || !on(target, picked) || on(ephemeral, picked) {
		t.Errorf("after the second run: picked on target %v, on ephemeral %v; want both namespaces' objects on target only", on(target, picked), on(ephemeral, picked))
	}
	for _, ns := range []string{"hosts", "tenant"} {
		if a := annotations(ns); a[apply.MovedToAnnotation] != "target" || a[apply.MovingToAnnotation] != "" || a[apply.MovingPhaseAnnotation] != "" {
			t.Errorf("%s annotations %v, want marked moved to target only", ns, a)
		}
	}
	st, err = executorOf("move-two").Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Objects) != 2 || !st.Objects[0].Ready || !st.Objects[1].Ready {
		t.Errorf("status once finished = %+v, want both namespaces marked moved", st)
	}
}

// TestFirstInitNeedsBootstrapAndControlPlane: on a cluster without a core
// provider, an init naming neither bootstrap nor control-plane providers is
// refused before clusterctl would go to the internet for kubeadm's.
func TestFirstInitNeedsBootstrapAndControlPlane(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	raw, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ph := strings.NewReplacer("CORE", "cluster-api:v1.14.2", "BOOTSTRAP", "", "CONTROLPLANE", "",
		"KUBECONFIG", env.Kubeconfig, "CONTEXT", raw.CurrentContext).Replace(phases)
	writeSite(t, dir, map[string]string{
		"config": "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: c\ncontexts: {c: {manifest: m}}\n" +
			"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n",
		"site/metadata.yaml":                      "phase: {path: phases}\n",
		"site/phases/kustomization.yaml":          "resources: [phases.yaml]\n",
		"site/phases/phases.yaml":                 ph,
		"site/providers/capi/kustomization.yaml":  "resources: []\n",
		"site/providers/cabpk/kustomization.yaml": "resources: []\n",
		"site/providers/kcp/kustomization.yaml":   "resources: []\n",
	})
	site, p := loadPhase(t, dir, "clusterctl-init")
	ex, err := site.Executor(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = ex.Run(ctx, executor.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), `cluster "mgmt" has no Cluster API core provider yet`) {
		t.Fatalf("first init without bootstrap and control-plane providers: %v", err)
	}
}
