package metal3operator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	infrav1beta2 "github.com/airshipit/airship-go/api/infrastructure/v1beta2"
	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// servingV1beta2 reads the operator's infrastructure CRDs as generated,
// each serving v1beta1 and v1beta2 and storing v1beta2.
func servingV1beta2(t *testing.T, root string) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "config", "metal3", "crd", "bases", "infrastructure.cluster.x-k8s.io_*.yaml"))
	if err != nil || len(paths) != len(ConversionCRDs) {
		t.Fatalf("infrastructure CRDs: %v (%v), want %d", paths, err, len(ConversionCRDs))
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var versions []string
		for _, v := range crd.Spec.Versions {
			versions = append(versions, fmt.Sprintf("%s served=%t storage=%t", v.Name, v.Served, v.Storage))
		}
		if want := []string{"v1beta1 served=true storage=false", "v1beta2 served=true storage=true"}; !slices.Equal(versions, want) {
			t.Fatalf("%s: versions %q, want %q", p, versions, want)
		}
		out = append(out, crd)
	}
	return out
}

// TestConversionWebhook: with the infrastructure CRDs as generated
// (v1beta2 stored, v1beta1 served), installed after the operator started, the
// operator's conversion webhook (its own certificate, kept in a Secret)
// is set on every CRD, and the API server
// converts through it: every kind of the v1beta1 objects and upstream
// ClusterClass templates, created as v1beta1, reads as v1beta2 what the
// Go conversion gives and as v1beta1 what was created; an object created
// as v1beta2 reads as v1beta1. An operator started again keeps the
// certificate of the Secret.
func TestConversionWebhook(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.StartAPI(t, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{infrav1.AddToScheme, infrav1beta2.AddToScheme}})
	ctx := t.Context()
	c := env.Client
	for _, ns := range []string{"metal3-system", "conv"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	start := func(addr string) context.CancelFunc {
		o := DefaultOptions()
		o.LeaderElection, o.SkipControllerNameValidation = false, true
		o.MetricsAddr, o.ProbeAddr = "0", "0"
		o.Controllers = []string{IPPoolController}
		// An hour between syncs: a CRD installed after the start is set
		// by the retries of a missing one, not by the next round.
		o.Conversion = operatorkit.ConversionWebhook{Addr: addr, URL: "https://" + addr, CertSecret: "metal3-system/metal3-operator-webhook", SyncInterval: time.Hour}
		runCtx, cancel := context.WithCancel(ctx)
		testenv.Go(t, runCtx, "metal3-operator", func(ctx context.Context) error { return Run(ctx, env.Config, o, logr.Discard()) })
		return cancel
	}
	addr := testenv.FreeAddr(t)
	stop := start(addr)
	// The CRDs come after the operator, as when a phase installs them.
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: servingV1beta2(t, root)}); err != nil {
		t.Fatal(err)
	}

	var ca []byte
	converting := func() (bool, string) {
		sec := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "metal3-system", Name: "metal3-operator-webhook"}, sec); err != nil {
			return false, err.Error()
		}
		if sec.Type != corev1.SecretTypeTLS || len(sec.Data["ca.crt"]) == 0 {
			return false, fmt.Sprintf("Secret of type %s with keys %d", sec.Type, len(sec.Data))
		}
		ca = sec.Data["ca.crt"]
		for _, name := range ConversionCRDs {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return false, err.Error()
			}
			cv := crd.Spec.Conversion
			if cv == nil || cv.Strategy != apiextensionsv1.WebhookConverter || cv.Webhook == nil || cv.Webhook.ClientConfig == nil ||
				cv.Webhook.ClientConfig.URL == nil || *cv.Webhook.ClientConfig.URL != "https://"+addr+"/convert" || !bytes.Equal(cv.Webhook.ClientConfig.CABundle, ca) {
				return false, fmt.Sprintf("CRD %s: conversion %+v", name, cv)
			}
		}
		return true, ""
	}
	poll(t, "every CRD converting through the webhook", converting)
	// A CRD applied again from a manifest that converts nothing (as
	// config/metal3/crd/bases says) is set again at once: its watch, not
	// the next sync an hour away.
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: ConversionCRDs[0]}, crd); err != nil {
		t.Fatal(err)
	}
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	if err := c.Update(ctx, crd); err != nil {
		t.Fatal(err)
	}
	poll(t, "the CRD applied again converting through the webhook", converting)

	var docs [][]byte
	for _, f := range []string{"objects.yaml", "templates-clusterclass.yaml"} {
		docs = append(docs, readDocs(t, filepath.Join(root, "api", "infrastructure", "v1beta1", "testdata", f))...)
	}
	kinds := map[string]bool{}
	for i, doc := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		if u.GroupVersionKind().GroupVersion() != infrav1.GroupVersion {
			continue
		}
		kind := u.GetKind()
		kinds[kind] = true
		u.SetNamespace("conv")
		u.SetName(fmt.Sprintf("%s-%d", strings.ToLower(kind), i))
		want := u.DeepCopy()
		if err := c.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s as v1beta1: %v", kind, u.GetName(), err)
		}
		key := client.ObjectKeyFromObject(u)

		// As v1beta1: what was created.
		back := &unstructured.Unstructured{}
		back.SetGroupVersionKind(want.GroupVersionKind())
		if err := c.Get(ctx, key, back); err != nil {
			t.Fatalf("%s %s as v1beta1: %v", kind, key.Name, err)
		}
		if path := missing(want.Object["spec"], back.Object["spec"], "spec"); path != "" {
			t.Errorf("%s %s read as v1beta1 lost %s: got %v", kind, key.Name, path, back.Object["spec"])
		}

		// As v1beta2: the Go conversion of it.
		spoke, err := env.Scheme.New(want.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(back.Object, spoke); err != nil {
			t.Fatal(err)
		}
		hubGVK := infrav1beta2.GroupVersion.WithKind(kind)
		wantHub, err := env.Scheme.New(hubGVK)
		if err != nil {
			t.Fatal(err)
		}
		if err := spoke.(conversion.Convertible).ConvertTo(wantHub.(conversion.Hub)); err != nil {
			t.Fatal(err)
		}
		gotHub, err := env.Scheme.New(hubGVK)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, key, gotHub.(client.Object)); err != nil {
			t.Fatalf("%s %s as v1beta2: %v", kind, key.Name, err)
		}
		if w, g := specOf(t, wantHub), specOf(t, gotHub); w != g {
			t.Errorf("%s %s read as v1beta2:\n got %s\nwant %s", kind, key.Name, g, w)
		}

		// Created as v1beta2: read as v1beta1, the Go conversion back.
		h := wantHub.(client.Object)
		h.SetName(key.Name + "-v1beta2")
		h.SetNamespace("conv")
		h.SetResourceVersion("")
		h.SetUID("")
		h.SetAnnotations(nil)
		h.SetCreationTimestamp(metav1.Time{})
		h.SetManagedFields(nil)
		wantDown, err := env.Scheme.New(want.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		if err := wantDown.(conversion.Convertible).ConvertFrom(h.DeepCopyObject().(conversion.Hub)); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, h); err != nil {
			t.Fatalf("creating %s %s as v1beta2: %v", kind, h.GetName(), err)
		}
		down, err := env.Scheme.New(want.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(h), down.(client.Object)); err != nil {
			t.Fatalf("%s %s as v1beta1: %v", kind, h.GetName(), err)
		}
		if w, g := specOf(t, wantDown), specOf(t, down); w != g {
			t.Errorf("%s %s created as v1beta2, read as v1beta1:\n got %s\nwant %s", kind, h.GetName(), g, w)
		}
	}
	if len(kinds) != len(ConversionCRDs) {
		t.Errorf("converted kinds %v, want one of each of the %d CRDs", kinds, len(ConversionCRDs))
	}

	// Started again: the Secret's certificate, not a new one.
	stop()
	addr = testenv.FreeAddr(t)
	start(addr)
	poll(t, "the restarted operator's URL on the CRDs, the Secret's CA, and reads through it", func() (bool, string) {
		for _, name := range ConversionCRDs {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return false, err.Error()
			}
			cc := crd.Spec.Conversion.Webhook.ClientConfig
			if *cc.URL != "https://"+addr+"/convert" || !bytes.Equal(cc.CABundle, ca) {
				return false, fmt.Sprintf("CRD %s: URL %s, same CA %t", name, *cc.URL, bytes.Equal(cc.CABundle, ca))
			}
		}
		var l infrav1.Metal3MachineTemplateList
		if err := c.List(ctx, &l, client.InNamespace("conv")); err != nil || len(l.Items) == 0 {
			return false, fmt.Sprintf("listing Metal3MachineTemplates as v1beta1: %v (%d)", err, len(l.Items))
		}
		return true, ""
	})
}

// missing is the path of the first field of want that got lacks or holds
// otherwise (got may hold more: the API server's defaults); a zero value
// in want matches a field left out.
func missing(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok && (got != nil || len(w) > 0) {
			return path
		}
		for k, v := range w {
			if p := missing(v, g[k], path+"."+k); p != "" {
				return p
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path
		}
		for i := range w {
			if p := missing(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
		return ""
	default:
		if got == nil && (want == nil || reflect.ValueOf(want).IsZero()) {
			return "" // a zero value written is one left out
		}
		if ws, ok := want.(string); ok {
			if gs, ok := got.(string); ok {
				wd, werr := time.ParseDuration(ws)
				gd, gerr := time.ParseDuration(gs)
				if werr == nil && gerr == nil && wd == gd {
					return "" // 5m is 5m0s
				}
			}
		}
		if !reflect.DeepEqual(normalNumber(want), normalNumber(got)) {
			return path
		}
		return ""
	}
}

func normalNumber(v any) any {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case int:
		return float64(n)
	}
	return v
}

// specOf is obj's spec as JSON.
func specOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(u["spec"])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readDocs splits a YAML file into its documents, clusterctl variables
// given placeholder values.
func readDocs(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"IMAGE_CHECKSUM_TYPE": "sha256", "IMAGE_CHECKSUM": "http://images.example/node.img.sha256sum",
		"IMAGE_FORMAT": "raw", "IMAGE_URL": "http://images.example/node.img"}
	b = []byte(os.Expand(string(b), func(v string) string {
		val, ok := vars[v]
		if !ok {
			t.Fatalf("%s: no value for ${%s}", path, v)
		}
		return val
	}))
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out [][]byte
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			out = append(out, doc)
		}
	}
	return out
}

func poll(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	last := ""
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ok, msg := cond()
		last = msg
		return ok, nil
	}); err != nil {
		t.Fatalf("%s: %v; last: %s", what, err, last)
	}
}
