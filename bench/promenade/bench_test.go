package promenade

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/promenade/certs"
	"github.com/airshipit/airship-go/internal/promenade/docset"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

func configFiles(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("../../examples/site/promenade/*.yaml")
	if err != nil || len(files) == 0 {
		tb.Fatal("example configuration not found")
	}
	for i, f := range files {
		if files[i], err = filepath.Abs(f); err != nil {
			tb.Fatal(err)
		}
	}
	return files
}

func loadCatalog(tb testing.TB) (*docset.Set, *certs.Catalog) {
	tb.Helper()
	set, err := docset.Load(configFiles(tb)...)
	if err != nil {
		tb.Fatal(err)
	}
	cat, err := certs.ReadCatalog(set)
	if err != nil {
		tb.Fatal(err)
	}
	return set, cat
}

// TestBothSidesWriteTheSameCatalog checks the comparison is fair: Go's
// output (certs.Generate and certs.Write, what `promenade generate-certs`
// runs) and openssl's, with its processes run in parallel, are read back
// and pass the same checks, file for file.
func TestBothSidesWriteTheSameCatalog(t *testing.T) {
	bin := testtool.Path(t, "openssl")
	set, cat := loadCatalog(t)
	goDir, sslDir := t.TempDir(), t.TempDir()
	res, err := certs.Generate(set, certs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := certs.Write(goDir, res); err != nil {
		t.Fatal(err)
	}
	if _, err := openSSLCatalog(t.Context(), bin, sslDir, cat, pki.ECDSAP256, runtime.NumCPU(), nil); err != nil {
		t.Fatal(err)
	}
	for side, dir := range map[string]string{"Go": goDir, "openssl": sslDir} {
		if err := checkCatalog(dir, cat, pki.ECDSAP256); err != nil {
			t.Errorf("%s's output: %v", side, err)
		}
	}
}

// TestCheckCatalogCatchesAWrongCatalog makes sure the checks can fail: a
// certificate signed by the wrong CA, a missing file and a wrong key type
// are each reported.
func TestCheckCatalogCatchesAWrongCatalog(t *testing.T) {
	set, cat := loadCatalog(t)
	dir := t.TempDir()
	res, err := certs.Generate(set, certs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := certs.Write(dir, res); err != nil {
		t.Fatal(err)
	}
	ca, leaf := cat.CAs[0], cat.CAs[0].Certificates[0]
	other := cat.CAs[1]
	for _, suffix := range []string{".pem", "-key.pem"} {
		data, err := os.ReadFile(filepath.Join(dir, "pki", "ca-"+other.Name+suffix))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pki", "ca-"+ca.Name+suffix), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "pki", cat.Keypairs[0].Name+".pub")); err != nil {
		t.Fatal(err)
	}
	err = checkCatalog(dir, cat, pki.RSA2048)
	if err == nil {
		t.Fatal("a wrong catalog passed the checks")
	}
	for _, want := range []string{
		leaf.DocumentName + ": does not chain to ca-" + ca.Name,
		"ca-" + ca.Name + ": IsCA true, CN \"" + other.Name + "\"",
		cat.Keypairs[0].Name + ": open",
		`key type "ecdsa-p256", want "rsa-2048"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}

// BenchmarkCatalog generates the example site's catalog with the
// `promenade generate-certs` binary and with openssl (openSSLCatalog), for
// ECDSA P-256 and RSA-2048 keys, on one core (both pinned to CPU 0 with
// taskset: Go sizes GOMAXPROCS from the affinity, openssl runs one process
// at a time) and on every core (Go unpinned, openssl runs as many processes
// at once as there are cores). Both sides write the same PEM files, each
// to a fresh directory; the first run reads both back through
// checkCatalog. Runs alternate which side goes first.
func BenchmarkCatalog(b *testing.B) {
	promenade := harness.Binary(b, "promenade")
	openssl := testtool.Path(b, "openssl")
	taskset := testtool.Path(b, "taskset")
	files := configFiles(b)
	_, cat := loadCatalog(b)
	cores := runtime.NumCPU()
	size := fmt.Sprintf("%d items", cat.NumItems())
	items := fmt.Sprintf("%d CAs, %d certificates, %d keypair", len(cat.CAs), cat.NumItems()-len(cat.CAs)-len(cat.Keypairs), len(cat.Keypairs))
	for _, kt := range []pki.KeyType{pki.ECDSAP256, pki.RSA2048} {
		b.Run(string(kt), func(b *testing.B) {
			type mode struct {
				name, parallelism string
				prefix            []string
				workers           int
				ours, peer        harness.Tally
				peerProcs         int
				peerRSS           float64
			}
			modes := []*mode{
				{name: "1 core", parallelism: "1 core each (taskset)", prefix: []string{taskset, "-c", "0"}, workers: 1},
				{name: "all cores", parallelism: fmt.Sprintf("%d cores; openssl %d at a time", cores, cores), workers: cores},
			}
			iter := 0
			for b.Loop() {
				for _, m := range modes {
					goDir, sslDir := b.TempDir(), b.TempDir()
					ours := func() {
						argv := append(append([]string(nil), m.prefix...), promenade, "generate-certs", "--output-dir", goDir, "--key-type", string(kt))
						cmd := exec.CommandContext(b.Context(), argv[0], append(argv[1:], files...)...)
						var out strings.Builder
						cmd.Stdout = &out
						p, err := harness.Run(cmd)
						if err != nil {
							b.Fatal(err)
						}
						if want := fmt.Sprintf("%d generated, 0 reused", cat.NumItems()); !strings.Contains(out.String(), want) {
							b.Fatalf("promenade printed %q, want %q", out.String(), want)
						}
						m.ours.AddProc(p)
					}
					peer := func() {
						start := time.Now()
						r, err := openSSLCatalog(b.Context(), openssl, sslDir, cat, kt, m.workers, m.prefix)
						if err != nil {
							b.Fatal(err)
						}
						m.peer.Add(time.Since(start), 0)
						m.peerProcs, m.peerRSS = r.processes, max(m.peerRSS, r.peakRSSMiB)
					}
					if iter%2 == 0 {
						ours()
						peer()
					} else {
						peer()
						ours()
					}
					if iter == 0 {
						for side, dir := range map[string]string{"promenade": goDir, "openssl": sslDir} {
							if err := checkCatalog(dir, cat, kt); err != nil {
								b.Fatalf("%s's %s catalog (%s): %v", side, kt, m.name, err)
							}
						}
					}
				}
				iter++
			}
			for _, m := range modes {
				harness.Record(b, harness.Row{
					Workload: "Promenade catalog", Size: size + ", " + keyName[kt],
					Ours:        "promenade generate-certs (the built binary) writing certificates.yaml and the PEM files",
					Peer:        fmt.Sprintf("openssl req -x509 per CA and certificate, genpkey + pkey for the keypair (%d processes) writing the same PEM files", m.peerProcs),
					OursSeconds: m.ours.Seconds(), PeerSeconds: m.peer.Seconds(), OursPeakRSSMiB: m.ours.PeakRSSMiB,
					Parallelism: m.parallelism, Cluster: "none", Runs: m.ours.Runs,
					Notes: []string{
						fmt.Sprintf("the example site's catalog (%s); 1 core: both pinned to CPU 0 with taskset -c 0 (Go sizes GOMAXPROCS from the affinity), openssl one process at a time; all cores: unpinned, openssl as many processes at once as there are cores", items),
						"both sides' files are read back and pass the same checks (chain, CN, groups, SANs, key usage, validity, key type, key matches certificate)",
						fmt.Sprintf("largest openssl process peak RSS %.0f MiB", m.peerRSS),
					},
				})
			}
		})
	}
}

var keyName = map[pki.KeyType]string{pki.ECDSAP256: "ECDSA P-256", pki.RSA2048: "RSA-2048"}

// BenchmarkGoCatalogECDSA is the Go side alone, in process, for plain ns/op.
func BenchmarkGoCatalogECDSA(b *testing.B) {
	set, _ := loadCatalog(b)
	for b.Loop() {
		if _, err := certs.Generate(set, certs.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGoCatalogRSA2048 is the Go side alone with RSA-2048 keys.
func BenchmarkGoCatalogRSA2048(b *testing.B) {
	set, _ := loadCatalog(b)
	for b.Loop() {
		if _, err := certs.Generate(set, certs.Options{KeyType: pki.RSA2048}); err != nil {
			b.Fatal(err)
		}
	}
}
