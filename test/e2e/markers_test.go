//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/airshipit/airship-go/internal/secret/sops/sopstest"
	"github.com/airshipit/airship-go/internal/test/marker"
)

// planted holds the marker values the example-plan test plants in its copy
// of the site, and says where each may be seen:
//
//   - secret: a Secret document of the site in clear (initinfra-ephemeral
//     applies it). It renders (the site holds it in clear) and lives in
//     the Secret's data; never in a log, an airshipctl output, an Event,
//     a status, a ConfigMap, an annotation or any object but a Secret's
//     data.
//   - bmc: the password of every emulated BMC (the emulator's config and
//     the hosts' credentials Secrets it writes). It renders (the hosts
//     documents hold it) and lives in the BMC Secrets' data and in the
//     emulator's config; never in a log, output or object as above.
//   - sops: a value of a SOPS-encrypted Secret document (encrypted for a
//     test age key; the sops function in initinfra-ephemeral decrypts it
//     with the key in airshipctl's environment). As the bmc and secret
//     markers, and besides: never in render output without the key, nor
//     in the render cache.
//   - age-identity: the age key itself. Never anywhere the test looks.
//
// Markers are looked for in every encoding internal/test/marker knows
// (plain, base64 at any alignment, base64 twice, hex).
type planted struct {
	secret, bmc, sops, ageKey marker.Marker
	// keyEnv exports the age key to airshipctl; noKeyEnv takes it away.
	keyEnv, noKeyEnv []string
}

// plantMarkers writes the markers into the site copy at site (the
// examples/site directory of the copy): the emulator's password, a Secret
// in clear and a SOPS-encrypted one (encrypted by `airshipctl secret
// encrypt`, the documented way) in initinfra-ephemeral's entry point,
// which decrypts it with the sops function.
func plantMarkers(t *testing.T, bin, site string) *planted {
	t.Helper()
	key := sopstest.NewAgeKey(t)
	p := &planted{
		secret: marker.New("site-secret"),
		bmc:    marker.New("bmc-password"),
		sops:   marker.New("sops-value"),
		ageKey: marker.Of("age-identity", key.Identity),
	}
	// No key from the caller's environment: only the one exported here.
	clean := []string{"SOPS_IMPORT_PGP=", "SOPS_IMPORT_AGE=", "SOPS_AGE_KEY_FILE=", "XDG_CONFIG_HOME="}
	p.keyEnv = append(clean, "SOPS_AGE_KEY="+key.Identity)
	p.noKeyEnv = append(clean, "SOPS_AGE_KEY=")

	// The emulator accepts this password and writes it into the hosts'
	// credentials Secrets (hosts.yaml) when it starts.
	replaceIn(t, filepath.Join(site, "function", "hosts", "emulator.yaml"), "password: example-bmc-password", "password: "+p.bmc.Value)

	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secretDoc := func(name, value string) string {
		return fmt.Sprintf("apiVersion: v1\ndata:\n  password: %s\nkind: Secret\nmetadata:\n  name: %s\n  namespace: airship-system\ntype: Opaque\n", b64(value), name)
	}
	initinfra := filepath.Join(site, "site", "local", "initinfra")
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(initinfra, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("planted-secret.yaml", secretDoc("planted-clear", p.secret.Value))
	write("planted-sops.clear", secretDoc("planted-sops", p.sops.Value))
	enc := run(t, bin, "secret", "encrypt", "--age", key.Recipient, "--encrypted-regex", "^(data|stringData)$", filepath.Join(initinfra, "planted-sops.clear"))
	if enc.code != 0 || !strings.Contains(enc.stdout, "ENC[") || len(marker.Set{p.sops}.ScanString("encrypted", enc.stdout)) != 0 {
		t.Fatalf("airshipctl secret encrypt: code %d\n%s%s", enc.code, enc.stdout, enc.stderr)
	}
	if err := os.Remove(filepath.Join(initinfra, "planted-sops.clear")); err != nil {
		t.Fatal(err)
	}
	write("planted-sops.yaml", enc.stdout)
	// Upstream's decrypt-secrets function config; a render without the key
	// leaves the document encrypted (with a warning) instead of failing.
	write("decrypt.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: decrypt-planted
  annotations:
    config.kubernetes.io/function: |
      container:
        image: gcr.io/kpt-fn-contrib/sops:v0.3.0
data:
  cmd: decrypt
  ignore-mac: "true"
  cmd-tolerate-failures: "true"
`)
	replaceIn(t, filepath.Join(initinfra, "kustomization.yaml"), "- ../../../type/local/initinfra\n",
		"- ../../../type/local/initinfra\n- planted-secret.yaml\n- planted-sops.yaml\ntransformers:\n- decrypt.yaml\n")
	return p
}

// all is every marker: what logs, outputs and clusters must never show.
func (p *planted) all() marker.Set { return marker.Set{p.secret, p.bmc, p.sops, p.ageKey} }

// encrypted is what a render without the key and the render cache must
// never show.
func (p *planted) encrypted() marker.Set { return marker.Set{p.sops, p.ageKey} }

// transcript records every airshipctl run of a test for the marker scan.
type transcript struct{ runs []string }

// run is runEnv, recorded.
func (tr *transcript) run(t *testing.T, env []string, bin string, args ...string) result {
	t.Helper()
	r := runEnv(t, env, bin, args...)
	what := "airshipctl " + strings.Join(args, " ")
	tr.runs = append(tr.runs, what+" (stdout)\x00"+r.stdout, what+" (stderr)\x00"+r.stderr)
	return r
}

// leakScan is what scanLeaks reads after the plan ran.
type leakScan struct {
	bin     string
	env     []string // airshipctl's environment in the test, with the key
	phases  []string
	logs    map[string]*syncBuffer // the test's long-lived processes
	logDirs []string               // log directories of the local clusters and managers
	runs    *transcript
	// clusters maps a cluster's name to its kubeconfig.
	clusters map[string]string
	cacheDir string // airshipctl's render cache
	kubectl  string
}

// scanLeaks fails the test for every marker found where it must not be
// (see planted), after checking the planting worked: the SOPS value
// decrypts with the key and is in the cluster, the BMC password is the
// one the hosts' Secrets hold.
func (p *planted) scanLeaks(t *testing.T, in leakScan) {
	t.Helper()
	began := time.Now()
	report := func(what string, f []marker.Finding, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("scanning %s: %v", what, err)
		}
		for _, l := range f {
			t.Errorf("leak: %s", l)
		}
	}
	render := func(env []string, args ...string) string {
		t.Helper()
		r := runEnv(t, append(append([]string{}, in.env...), env...), in.bin, append([]string{"phase", "render"}, args...)...)
		// A clusterctl move phase has nothing to render and says so.
		if r.code != 0 && !strings.Contains(r.stderr, "clusterctl move has no documents to render") {
			t.Errorf("phase render %s: code %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r.stdout + r.stderr
	}

	// The planting worked: with the key, the render holds both Secrets'
	// values; without it, the clear one and the encrypted document.
	withKey := render(p.keyEnv, "initinfra-ephemeral")
	if len(marker.Set{p.sops}.ScanString("render", withKey)) == 0 || len(marker.Set{p.secret}.ScanString("render", withKey)) == 0 {
		t.Errorf("phase render initinfra-ephemeral with the key lacks the planted values:\n%s", withKey)
	}
	withoutKey := render(p.noKeyEnv, "initinfra-ephemeral")
	if len(marker.Set{p.secret}.ScanString("render", withoutKey)) == 0 || !strings.Contains(withoutKey, "ENC[AES256_GCM,") {
		t.Errorf("phase render initinfra-ephemeral without the key lacks the clear Secret or the encrypted document:\n%s", withoutKey)
	}
	// What the plan applied: the decrypted value, the emulator's password.
	// It runs at cleanup, after the test's context is done.
	secretValue := func(kubeconfig, ns, name string) string {
		out, err := exec.CommandContext(context.WithoutCancel(t.Context()), in.kubectl, "--kubeconfig", kubeconfig, "-n", ns, "get", "secret", name, "-o", "jsonpath={.data.password}").Output()
		if err != nil {
			t.Errorf("Secret %s/%s: %v", ns, name, err)
			return ""
		}
		v, _ := base64.StdEncoding.DecodeString(string(out))
		return string(v)
	}
	if v := secretValue(in.clusters["ephemeral-cluster"], "airship-system", "planted-sops"); v != p.sops.Value {
		t.Errorf("the plan applied Secret airship-system/planted-sops with %d bytes, want the decrypted marker", len(v))
	}
	if v := secretValue(in.clusters["target-cluster"], "metal3", "node01-bmc-secret"); v != p.bmc.Value {
		t.Errorf("Secret metal3/node01-bmc-secret in the target cluster holds %d bytes, want the planted BMC password", len(v))
	}

	// Render output without the key: every phase, and the config.
	for _, ph := range in.phases {
		report("phase render "+ph, p.encrypted().ScanString("phase render "+ph+" without the key", render(p.noKeyEnv, ph)), nil)
	}
	report("phase render --source config", p.encrypted().ScanString("phase render --source config without the key", render(p.noKeyEnv, "--source", "config")), nil)
	f, err := p.encrypted().ScanPaths(in.cacheDir)
	report("the render cache", f, err)

	// Logs and outputs.
	names := make([]string, 0, len(in.logs))
	for n := range in.logs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		text := in.logs[n].String()
		if text == "" {
			t.Errorf("the %s log is empty: nothing to scan", n)
		}
		report(n+" log", p.all().ScanString(n+" log", text), nil)
	}
	for _, d := range in.logDirs {
		entries, err := os.ReadDir(d)
		if err == nil && len(entries) == 0 {
			t.Errorf("log directory %s is empty: nothing to scan", d)
		}
		f, err := p.all().ScanPaths(d)
		report(d, f, err)
	}
	for _, r := range in.runs.runs {
		what, text, _ := strings.Cut(r, "\x00")
		report(what, p.all().ScanString(what, text), nil)
	}

	// Both clusters: Events, statuses, ConfigMaps, annotations, every
	// object but a Secret's data.
	for name, kubeconfig := range in.clusters {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		cfg.QPS, cfg.Burst = 200, 400
		c, err := marker.ClusterFor(name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		f, err := p.all().ScanCluster(context.Background(), c)
		report("cluster "+name, f, err)
	}
	t.Logf("marker scan (renders, %d process logs, %d log directories, %d airshipctl outputs, %d clusters) took %s",
		len(in.logs), len(in.logDirs), len(in.runs.runs), len(in.clusters), time.Since(began).Round(time.Millisecond))
}
