package dashboardcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/buildinfo"
	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	"github.com/airshipit/airship-go/internal/dashboard"
	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/phase/runlog"
)

// TokenEnv names the environment variable holding the dashboard's token.
const TokenEnv = "AIRSHIP_DASHBOARD_TOKEN"

// MemoryLimit is the Go runtime's soft memory limit in the dashboard
// process, unless $GOMEMLIMIT sets one. Its live heap is about 1 KiB a
// BareMetalHost (15 MiB at 10,000): collecting before the heap doubles
// keeps it at 94 MiB of RSS there (100 MiB without; 3.75 s to sync instead
// of 3.3). Soft: with more hosts the heap grows past it, and the runtime
// gives the collector at most half the CPU.
const MemoryLimit = 32 << 20

// Options are the flags of `airshipctl dashboard`.
type Options struct {
	Listen       string
	CertFile     string
	KeyFile      string
	TokenFile    string
	AllowActions bool
	Open         bool
	AuditLog     string
	RunLog       string
	PKIDir       string
	PromenadeDir string
	Timeouts     httplimit.ServerTimeouts
	// Started, when set, receives the URL once the server listens (tests).
	Started func(url string)
}

// NewCmd returns `airshipctl dashboard`.
func NewCmd(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve a live web view of the site: plan, phases, hosts, clusters, charts, certificates",
		Long:  long,
		Example: `  # On this machine, read-only, on a free port
  airshipctl dashboard

  # With actions (run phases and plans, power hosts), recorded in the audit log
  airshipctl dashboard --allow-actions --listen 127.0.0.1:8080

  # Beyond loopback: a token and TLS are required
  airshipctl dashboard --listen 0.0.0.0:8443 --token-file token --tls-cert tls.crt --tls-key tls.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), streams, g)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Listen, "listen", "127.0.0.1:0", "address to serve on (port 0: a free one); beyond loopback only with --token-file and TLS")
	f.StringVar(&o.CertFile, "tls-cert", "", "PEM certificate (chain) to serve HTTPS with")
	f.StringVar(&o.KeyFile, "tls-key", "", "PEM private key of --tls-cert")
	f.StringVar(&o.TokenFile, "token-file", "", "file holding the token every request must carry (overrides $"+TokenEnv+")")
	f.BoolVar(&o.AllowActions, "allow-actions", false, "allow running phases and plans and powering hosts from the dashboard")
	f.BoolVar(&o.Open, "open", false, "open the dashboard in the desktop's browser (xdg-open)")
	f.StringVar(&o.AuditLog, "audit-log", "", "file actions are recorded in (default: <state>/dashboard/<manifest>/audit.jsonl, <state> ~/.airship/state or the parent of $AIRSHIP_PHASE_STATE_DIR)")
	f.StringVar(&o.RunLog, "run-log", "", "file runs are recorded in (default: <state>/dashboard/<manifest>/runs.jsonl)")
	f.StringVar(&o.PKIDir, "pki-dir", os.Getenv("PROMENADE_OUTPUT_DIR"), "where the site's PKI is kept (certificates.yaml), for the certificates page ($PROMENADE_OUTPUT_DIR)")
	f.StringVar(&o.PromenadeDir, "promenade-dir", "", "the site's Promenade documents (its PKICatalog), for the certificates page")
	f.DurationVar(&o.Timeouts.ReadHeader, "read-header-timeout", httplimit.DefaultReadHeaderTimeout, "time limit of reading a request's header")
	f.DurationVar(&o.Timeouts.Read, "read-timeout", httplimit.DefaultReadTimeout, "time limit of reading a whole request")
	f.DurationVar(&o.Timeouts.Write, "write-timeout", httplimit.DefaultWriteTimeout, "time limit of answering a request (the event stream excepted)")
	f.DurationVar(&o.Timeouts.Idle, "idle-timeout", httplimit.DefaultIdleTimeout, "how long an idle kept-alive connection stays open")
	return cmd
}

const long = `Serve a live web view of the site: what needs attention, the plan as a
graph with each phase's state, a phase's documents (source, rendered with
Secret data redacted, and against live), every BareMetalHost of every
cluster, the ClusterMap, the Armada charts and the PKI's certificates.

The server watches every cluster of the ClusterMap it can reach and pushes
changes to the browser as they happen (server-sent events); a cluster not
up yet is tried again every 10 seconds.

Safe by default: it listens on 127.0.0.1 and is read-only. Actions (run a
phase or plan, power a host on or off, reboot or inspect it) need
--allow-actions, take a JSON POST from the dashboard's own origin, and are
recorded in the audit log (who, when, from where, what, result); refused
ones too. Beyond loopback it needs a token (--token-file or $` + TokenEnv + `),
sent as "Authorization: Bearer <token>" or through the session cookie the
sign-in page sets, and TLS (--tls-cert, --tls-key). Without a token it
answers only requests addressed to an IP address or localhost, so a web
page cannot reach it by rebinding its own name.`

// Run checks the flags, loads the site and serves until ctx ends.
func (o *Options) Run(ctx context.Context, streams cli.IOStreams, g *siteflags.Options) error {
	if (o.CertFile == "") != (o.KeyFile == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	token := os.Getenv(TokenEnv)
	if o.TokenFile != "" {
		b, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return fmt.Errorf("--token-file %s is empty", o.TokenFile)
		}
	}
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", o.Listen, err)
	}
	if !httplimit.IsLoopbackHost(host) {
		if token == "" {
			return fmt.Errorf("--listen %s is not a loopback address: give a token with --token-file (or $%s)", o.Listen, TokenEnv)
		}
		if o.CertFile == "" {
			return fmt.Errorf("--listen %s is not a loopback address: the token must not cross the network in clear; give --tls-cert and --tls-key", o.Listen)
		}
	}
	cfg, err := g.Config()
	if err != nil {
		return err
	}
	ctxName, _, err := cfg.Context("")
	if err != nil {
		return err
	}
	site, err := g.Site()
	if err != nil {
		return err
	}
	if o.AuditLog == "" {
		o.AuditLog = runlog.AuditPath(site.Site.Name)
	}
	if o.RunLog == "" {
		o.RunLog = runlog.RunsPath(site.Site.Name)
	}
	// A long-running watcher: collect sooner rather than let the heap grow
	// to twice what it holds.
	cli.SoftMemoryLimit(MemoryLimit)
	srv, err := dashboard.New(dashboard.Options{
		Site:         site,
		Context:      ctxName,
		AllowActions: o.AllowActions,
		Token:        token,
		AuditLog:     o.AuditLog,
		RunLog:       o.RunLog,
		PKIDir:       o.PKIDir,
		PKIConfigDir: o.PromenadeDir,
		Version:      buildinfo.Get("airshipctl").Version,
	})
	if err != nil {
		return err
	}
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", o.Listen)
	if err != nil {
		return err
	}
	srv.Start(ctx)
	url := dashboardURL(ln.Addr(), o.CertFile != "")
	fmt.Fprintf(streams.Out, "dashboard of site %s listening on %s (actions: %s, token required: %s, audit log %s)\n",
		site.Site.Name, url, onOff(o.AllowActions), yesNo(token != ""), o.AuditLog)
	if o.Started != nil {
		o.Started(url)
	}
	if o.Open {
		if err := exec.CommandContext(ctx, "xdg-open", url).Start(); err != nil {
			fmt.Fprintf(streams.ErrOut, "--open: %v; open %s yourself\n", err, url)
		}
	}
	return httplimit.Serve(ctx, ln, srv, o.CertFile, o.KeyFile, o.Timeouts)
}

// dashboardURL is the address to open: 127.0.0.1 for a wildcard listener.
func dashboardURL(addr net.Addr, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return scheme + "://" + addr.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return fmt.Sprintf("%s://%s/", scheme, net.JoinHostPort(host, fmt.Sprint(tcp.Port)))
}

func onOff(b bool) string {
	if b {
		return "allowed"
	}
	return "off"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
