package promenade

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/promenade/certs"
)

func newKeyArgs(kt pki.KeyType) []string {
	if kt == pki.RSA2048 {
		return []string{"-newkey", "rsa:2048"}
	}
	return []string{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"}
}

func subject(cn string, groups []string) string {
	var b strings.Builder
	for _, g := range groups {
		b.WriteString("/O=" + g)
	}
	b.WriteString("/CN=" + cn)
	return b.String()
}

// opensslRun is what one openssl catalog run did.
type opensslRun struct {
	processes int
	// peakRSSMiB is the largest peak of any one openssl process.
	peakRSSMiB float64
}

// openSSLCatalog writes the catalog as a shell-out implementation would,
// one openssl process per CA and certificate (`req -x509`, which makes the
// key and the certificate in one go) and two per keypair (`genpkey`, then
// `pkey -pubout` for the public key file Go writes too), into dir/pki under
// the names certs.Write uses. CAs come first; then every certificate and
// keypair. workers processes run at once (1: one at a time). prefix is
// put in front of every command (for example taskset).
func openSSLCatalog(ctx context.Context, bin, dir string, cat *certs.Catalog, kt pki.KeyType, workers int, prefix []string) (opensslRun, error) {
	out := filepath.Join(dir, "pki")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return opensslRun{}, err
	}
	var mu sync.Mutex
	var res opensslRun
	run := func(args ...string) error {
		argv := append(append(append([]string(nil), prefix...), bin), args...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = out
		p, err := harness.Run(cmd)
		mu.Lock()
		res.processes++
		res.peakRSSMiB = max(res.peakRSSMiB, p.PeakRSSMiB)
		mu.Unlock()
		return err
	}
	var cas, rest []func() error
	for _, ca := range cat.CAs {
		args := append([]string{"req", "-x509", "-nodes", "-batch"}, newKeyArgs(kt)...)
		args = append(args, "-keyout", "ca-"+ca.Name+"-key.pem", "-out", "ca-"+ca.Name+".pem",
			"-subj", "/CN="+ca.Name, "-days", "3650",
			"-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature")
		cas = append(cas, func() error { return run(args...) })
		for _, c := range ca.Certificates {
			var sans []string
			for _, h := range append(append([]string(nil), c.Hosts...), c.KubernetesServiceNames...) {
				if net.ParseIP(h) != nil {
					sans = append(sans, "IP:"+h)
				} else {
					sans = append(sans, "DNS:"+h)
				}
			}
			usage := "keyUsage=critical,digitalSignature"
			if kt == pki.RSA2048 {
				usage += ",keyEncipherment"
			}
			args := append([]string{"req", "-x509", "-nodes", "-batch"}, newKeyArgs(kt)...)
			args = append(args, "-keyout", c.DocumentName+"-key.pem", "-out", c.DocumentName+".pem",
				"-subj", subject(c.CommonName, c.Groups), "-days", "365",
				"-CA", "ca-"+ca.Name+".pem", "-CAkey", "ca-"+ca.Name+"-key.pem",
				"-addext", "basicConstraints=critical,CA:FALSE",
				"-addext", usage,
				"-addext", "extendedKeyUsage=serverAuth,clientAuth")
			if len(sans) > 0 {
				args = append(args, "-addext", "subjectAltName="+strings.Join(sans, ","))
			}
			rest = append(rest, func() error { return run(args...) })
		}
	}
	for _, kp := range cat.Keypairs {
		gen := []string{"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", kp.Name + "-key.pem"}
		if kt == pki.RSA2048 {
			gen = []string{"genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", kp.Name + "-key.pem"}
		}
		rest = append(rest, func() error {
			if err := run(gen...); err != nil {
				return err
			}
			return run("pkey", "-in", kp.Name+"-key.pem", "-pubout", "-out", kp.Name+".pub")
		})
	}
	for _, stage := range [][]func() error{cas, rest} {
		if err := pool(workers, stage); err != nil {
			return res, err
		}
	}
	return res, nil
}

// pool runs jobs, at most workers at once, and joins their errors.
func pool(workers int, jobs []func() error) error {
	next := make(chan func() error)
	errs := make(chan error, len(jobs))
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range next {
				errs <- job()
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	close(errs)
	var msgs []string
	for err := range errs {
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("openssl: %s", strings.Join(msgs, "\n"))
	}
	return nil
}
