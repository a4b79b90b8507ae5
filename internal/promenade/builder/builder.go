// Package builder renders Promenade's self-contained node scripts:
// genesis.sh, join-<node>.sh, remove-<node>.sh and the validate-*.sh
// scripts. Each node script carries the files it lays down as a base64
// tarball, starts with host validation, installs packages, starts the
// container runtime and kubelet, waits for health, applies the node's
// labels, and is safe to run twice. A removal script undoes a join or the
// genesis, taking the node's members out of the Kubernetes etcd cluster
// when the cluster keeps its quorum without them.
package builder

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

// Options for building scripts.
type Options struct {
	// Validators adds validate-genesis.sh, validate-<node>.sh and
	// validate-cluster.sh.
	Validators bool
	// LeaveKubectl keeps kubectl and the admin kubeconfig on joined nodes.
	LeaveKubectl bool
	// Now is the clock for certificates issued on the fly (default time.Now).
	Now func() time.Time
}

// Builder renders scripts from a configuration set.
type Builder struct {
	set  *docset.Set
	opts Options

	genesis    v1.Genesis
	network    v1.KubernetesNetwork
	host       v1.HostSystem
	kubelet    v1.Kubelet
	docker     *v1.Docker
	containerd *v1.Containerd
	encryption *v1.EncryptionPolicy
	nodes      []docset.Node
}

// New reads the configuration documents the scripts need. Missing or
// inconsistent documents are reported together.
func New(set *docset.Set, opts Options) (*Builder, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	b := &Builder{set: set, opts: opts}
	var errs []error
	for _, one := range []struct {
		schema string
		v      any
	}{
		{v1.SchemaGenesis, &b.genesis},
		{v1.SchemaKubernetesNetwork, &b.network},
		{v1.SchemaHostSystem, &b.host},
		{v1.SchemaKubelet, &b.kubelet},
	} {
		if err := set.One(one.schema, one.v); err != nil {
			errs = append(errs, err)
		}
	}
	var d v1.Docker
	if ok, err := set.Optional(v1.SchemaDocker, &d); err != nil {
		errs = append(errs, err)
	} else if ok {
		b.docker = &d
	}
	var c v1.Containerd
	if ok, err := set.Optional(v1.SchemaContainerd, &c); err != nil {
		errs = append(errs, err)
	} else if ok {
		b.containerd = &c
	}
	if b.docker != nil && b.containerd != nil {
		errs = append(errs, errors.New("the configuration has both a Docker and a Containerd document; choose one container runtime"))
	}
	var e v1.EncryptionPolicy
	if ok, err := set.Optional(v1.SchemaEncryptionPolicy, &e); err != nil {
		errs = append(errs, err)
	} else if ok {
		b.encryption = &e
	}
	nodes, err := set.Nodes()
	if err != nil {
		errs = append(errs, err)
	}
	b.nodes = nodes
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	return b, nil
}

// check finds problems the schemas cannot: nodes without a usable IP,
// duplicate hostnames, file sources the builder cannot lay down.
func (b *Builder) check() error {
	var errs []string
	seen := map[string]string{b.genesis.Hostname: "the Genesis document"}
	checkIP := func(what, ip string) {
		if ip == "" {
			errs = append(errs, fmt.Sprintf("%s has no ip; every node needs the address other nodes reach it on", what))
		} else if net.ParseIP(ip) == nil {
			errs = append(errs, fmt.Sprintf("%s: ip %q is not an IP address", what, ip))
		}
	}
	checkIP("genesis node "+b.genesis.Hostname, b.genesis.IP)
	for _, n := range b.nodes {
		what := fmt.Sprintf("KubernetesNode %s", n.Name)
		checkIP(what, n.IP)
		if prev, ok := seen[n.Hostname]; ok {
			errs = append(errs, fmt.Sprintf("%s: hostname %q is also used by %s", what, n.Hostname, prev))
		}
		seen[n.Hostname] = what
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// Nodes returns the join nodes of the configuration.
func (b *Builder) Nodes() []docset.Node { return b.nodes }

// Script is a rendered script.
type Script struct {
	Name    string
	Content []byte
}

// BuildAll renders genesis.sh and remove-<genesis>.sh, join-<node>.sh and
// remove-<node>.sh for every KubernetesNode and, with Validators, the
// validation scripts.
func (b *Builder) BuildAll() ([]Script, error) {
	var out []Script
	g, err := b.GenesisScript()
	if err != nil {
		return nil, err
	}
	out = append(out, Script{"genesis.sh", g})
	if b.opts.Validators {
		v, err := b.ValidateNodeScript(b.genesisNode(), true)
		if err != nil {
			return nil, err
		}
		out = append(out, Script{"validate-genesis.sh", v})
	}
	rg, err := b.GenesisRemovalScript()
	if err != nil {
		return nil, err
	}
	out = append(out, Script{RemovalScriptName(b.genesis.Hostname), rg})
	for _, n := range b.nodes {
		j, err := b.JoinScript(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Script{"join-" + n.Hostname + ".sh", j})
		rm, err := b.RemovalScript(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Script{RemovalScriptName(n.Hostname), rm})
		if b.opts.Validators {
			v, err := b.ValidateNodeScript(n, false)
			if err != nil {
				return nil, err
			}
			out = append(out, Script{"validate-" + n.Hostname + ".sh", v})
		}
	}
	if b.opts.Validators {
		c, err := b.ValidateClusterScript()
		if err != nil {
			return nil, err
		}
		out = append(out, Script{"validate-cluster.sh", c})
	}
	return out, nil
}

// WriteScripts writes scripts into dir with mode 0700 (they hold private
// keys). Nothing is written unless every script rendered.
func WriteScripts(dir string, scripts []Script) error {
	for _, s := range scripts {
		if err := fileutil.WriteAtomic(filepath.Join(dir, s.Name), s.Content, 0o700); err != nil {
			return err
		}
	}
	return nil
}

func (b *Builder) genesisNode() docset.Node {
	return docset.Node{Name: "genesis", KubernetesNode: v1.KubernetesNode{
		Hostname: b.genesis.Hostname, IP: b.genesis.IP, ExternalIP: b.genesis.ExternalIP,
		Domain: b.genesis.Domain, Labels: b.genesis.Labels,
	}}
}

// material returns the PEM of the first of names that exists.
func (b *Builder) material(schema string, names ...string) (string, error) {
	for _, n := range names {
		if s := b.set.PEM(schema, n); s != "" {
			return s, nil
		}
	}
	return "", fmt.Errorf("no %s document named %s in the configuration (run promenade generate-certs and pass its certificates.yaml)",
		schema, strings.Join(names, " or "))
}

type pair struct{ cert, key string }

func (b *Builder) certPair(names ...string) (pair, error) {
	c, err := b.material(v1.SchemaCertificate, names...)
	if err != nil {
		return pair{}, err
	}
	for _, n := range names {
		if b.set.PEM(v1.SchemaCertificate, n) != "" {
			k, err := b.material(v1.SchemaCertificateKey, n)
			return pair{c, k}, err
		}
	}
	return pair{}, nil
}

// kubeletPair finds kubelet-<hostname>, or issues one from the kubernetes
// CA when the configuration carries the CA key (the API does this for
// nodes that are not in the catalog).
func (b *Builder) kubeletPair(n docset.Node, genesis bool) (pair, error) {
	names := []string{"kubelet-" + n.Hostname}
	if genesis {
		names = append(names, "kubelet-genesis")
	}
	if p, err := b.certPair(names...); err == nil {
		return p, nil
	}
	caPEM := b.set.PEM(v1.SchemaCertificateAuthority, "kubernetes")
	caKey := b.set.PEM(v1.SchemaCertificateAuthorityKey, "kubernetes")
	if caPEM == "" || caKey == "" {
		return pair{}, fmt.Errorf("node %s: no Certificate kubelet-%s and no kubernetes CA key to issue one (run promenade generate-certs and pass its certificates.yaml)", n.Hostname, n.Hostname)
	}
	ca, err := pki.Parse([]byte(caPEM), []byte(caKey))
	if err != nil {
		return pair{}, fmt.Errorf("kubernetes CA: %w", err)
	}
	kt := pki.ECDSAP256
	if _, ok := ca.Cert.PublicKey.(interface{ Size() int }); ok && ca.Cert.PublicKeyAlgorithm == x509.RSA {
		kt = pki.RSA2048
	}
	kp, err := ca.Issue(pki.Request{
		CommonName: "system:node:" + n.Hostname, Organizations: []string{"system:nodes"},
		Hosts: []string{n.Hostname, n.IP}, Server: true, Client: true, KeyType: kt,
	})
	if err != nil {
		return pair{}, err
	}
	key, err := kp.KeyPEM()
	if err != nil {
		return pair{}, err
	}
	return pair{string(kp.CertPEM()), string(key)}, nil
}

func labelsOf(l v1.Labels) []string {
	out := append(append([]string(nil), l.Static...), l.Dynamic...)
	return out
}

// masters are the API server addresses a joining node balances over: the
// genesis node, nodes labelled kubernetes-apiserver=enabled and the node's
// join IPs.
func (b *Builder) masters(n *docset.Node) []string {
	ips := []string{b.genesis.IP}
	for _, o := range b.nodes {
		if slices.Contains(labelsOf(o.Labels), "kubernetes-apiserver=enabled") {
			ips = append(ips, o.IP)
		}
	}
	if n != nil {
		if n.JoinIP != "" {
			ips = append(ips, n.JoinIP)
		}
		ips = append(ips, n.JoinIPs...)
	}
	seen := map[string]bool{}
	var out []string
	for _, ip := range ips {
		if !seen[ip] {
			seen[ip] = true
			out = append(out, ip)
		}
	}
	return out
}
