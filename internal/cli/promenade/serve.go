package promenade

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/promenade/server"
)

// TokenEnv names the environment variable holding the API bearer token.
const TokenEnv = "PROMENADE_API_TOKEN"

// KubeTimeout bounds each request node-labels sends to the API server
// (a variable for tests).
var KubeTimeout = 30 * time.Second

// serveFlags are promenade serve's flags.
type serveFlags struct {
	listen, certFile, keyFile, tokenFile string
	kubeconfig                           string
	insecureNoAuth                       bool
	opts                                 server.Options
	timeouts                             httplimit.ServerTimeouts
}

func newServeCmd(streams cli.IOStreams) *cobra.Command {
	var sf serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the Promenade API (join and removal scripts, node labels, design validation, health, versions)",
		Long:  serveLong,
		Example: `  # On a node's network, with TLS and a token
  promenade serve --listen 0.0.0.0:9000 --tls-cert api.crt --tls-key api.key \
    --token-file /etc/promenade/token --design-root /srv/designs

  # Locally, for a quick try
  promenade serve --listen 127.0.0.1:9000 --insecure-no-auth --design-root ./site`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.run(cmd.Context(), streams)
		},
	}
	f := cmd.Flags()
	f.StringVar(&sf.listen, "listen", "127.0.0.1:9000", "address to listen on")
	f.StringVar(&sf.certFile, "tls-cert", "", "PEM certificate (chain) to serve HTTPS with")
	f.StringVar(&sf.keyFile, "tls-key", "", "PEM private key of --tls-cert")
	f.StringVar(&sf.tokenFile, "token-file", "", "file holding the bearer token clients must send (overrides "+TokenEnv+")")
	f.BoolVar(&sf.insecureNoAuth, "insecure-no-auth", false, "serve without a token (loopback addresses only)")
	f.StringVar(&sf.opts.DesignRoot, "design-root", "", "directory file design_refs are confined to (default: the working directory)")
	f.BoolVar(&sf.opts.AllowRemote, "allow-remote-designs", false, "let design_refs be http(s) URLs this server fetches")
	f.DurationVar(&sf.opts.RemoteTimeout, "remote-design-timeout", server.DefaultRemoteTimeout, "time limit of one remote design fetch")
	f.StringVar(&sf.kubeconfig, "kubeconfig", "", "kubeconfig whose credentials node-labels changes Nodes with (default: in-cluster config, if any)")
	f.Int64Var(&sf.opts.MaxDesignBytes, "max-design-bytes", server.DefaultMaxDesignBytes, "size limit of a remote design")
	f.DurationVar(&sf.timeouts.ReadHeader, "read-header-timeout", httplimit.DefaultReadHeaderTimeout, "time limit of reading a request's header")
	f.DurationVar(&sf.timeouts.Read, "read-timeout", httplimit.DefaultReadTimeout, "time limit of reading a whole request")
	f.DurationVar(&sf.timeouts.Write, "write-timeout", httplimit.DefaultWriteTimeout, "time limit of handling a request and writing its answer")
	f.DurationVar(&sf.timeouts.Idle, "idle-timeout", httplimit.DefaultIdleTimeout, "how long an idle kept-alive connection stays open")
	return cmd
}

const serveLong = `Serves:
  GET  /api/v1.0/join-scripts?hostname=&ip=&design_ref=[&labels.static=][&labels.dynamic=][&leave_kubectl=]
  GET  /api/v1.0/removal-scripts?hostname=&design_ref=[&ip=][&labels.static=][&labels.dynamic=]
  PUT  /api/v1.0/node-labels/{node}[?force=true]   {"label": "value", "removed-label": null}
  POST /api/v1.0/validatedesign   {"href": "<design_ref>"}
  GET  /api/v1.0/health
  GET  /api/v1.0/versions
design_ref is a file or directory path below --design-root (default: the
working directory; symbolic links are followed only within it) or a
file:// URL of one; http(s) URLs only with --allow-remote-designs.

Join scripts carry the site's private keys, so the API is safe by default:
join-scripts and validatedesign require "Authorization: Bearer <token>" with
the token from --token-file (or the ` + TokenEnv + ` environment variable).
Without a token the server refuses to start; --insecure-no-auth turns auth
off, and only on a loopback address. With --tls-cert and --tls-key it serves
HTTPS; a non-loopback address requires them.

node-labels changes Nodes with the credentials of --kubeconfig (or, without
it, the in-cluster service account); with neither it answers 503. Labels
that move a node in or out of the control plane or etcd are refused unless
force=true.

Connections are bounded: a request's header must arrive within
--read-header-timeout and all of it within --read-timeout, an answer is
written within --write-timeout (raised to --remote-design-timeout plus 30s
when remote designs are allowed and that is longer), and a kept-alive
connection waiting for its next request is closed after --idle-timeout.
A remote design fetch is bounded by --remote-design-timeout and
--max-design-bytes.`

// run checks the flags (TLS pair, token, exposure), then serves until ctx
// ends.
func (sf *serveFlags) run(ctx context.Context, streams cli.IOStreams) error {
	if (sf.certFile == "") != (sf.keyFile == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	opts, timeouts := sf.opts, sf.timeouts
	opts.Token = os.Getenv(TokenEnv)
	if sf.tokenFile != "" {
		b, err := os.ReadFile(sf.tokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		opts.Token = strings.TrimSpace(string(b))
		if opts.Token == "" {
			return fmt.Errorf("--token-file %s is empty", sf.tokenFile)
		}
	}
	if err := checkExposure(sf.listen, opts.Token != "", sf.insecureNoAuth, sf.certFile != ""); err != nil {
		return err
	}
	kube, kubeFrom, err := kubeClient(sf.kubeconfig)
	if err != nil {
		return err
	}
	opts.Kube = kube
	h, err := server.New(opts)
	if err != nil {
		return err
	}
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", sf.listen)
	if err != nil {
		return err
	}
	scheme := "http"
	if sf.certFile != "" {
		scheme = "https"
	}
	fmt.Fprintf(streams.Out, "promenade API listening on %s://%s (token required: %v, design root %s, remote designs: %v, node labels: %s)\n",
		scheme, ln.Addr(), opts.Token != "", opts.DesignRoot, opts.AllowRemote, kubeFrom)
	if opts.AllowRemote {
		timeouts.Write = max(timeouts.Write, opts.RemoteTimeout+30*time.Second)
	}
	return Serve(ctx, ln, h, sf.certFile, sf.keyFile, timeouts)
}

// kubeClient is the client node-labels uses: from the kubeconfig file,
// else the in-cluster service account, else none. It also says which, for
// the start-up line.
func kubeClient(path string) (kubernetes.Interface, string, error) {
	var cfg *rest.Config
	var from string
	var err error
	switch {
	case path != "":
		if cfg, err = clientcmd.BuildConfigFromFlags("", path); err != nil {
			return nil, "", fmt.Errorf("--kubeconfig %s: %w", path, err)
		}
		from = "kubeconfig " + path
	default:
		if cfg, err = rest.InClusterConfig(); err != nil {
			return nil, "off (no --kubeconfig and not in a cluster; node-labels answers 503)", nil
		}
		from = "in-cluster service account"
	}
	// Each request to the API server is bounded in time and size.
	cfg.Timeout = KubeTimeout
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return httplimit.LimitResponses(rt, httplimit.DefaultMaxResponseBytes)
	})
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("kubernetes client: %w", err)
	}
	return cs, from, nil
}

// checkExposure refuses the combinations that would hand out a site's keys
// to anyone who can reach the address: no token without an explicit
// --insecure-no-auth, --insecure-no-auth beyond loopback, and plain HTTP
// beyond loopback.
func checkExposure(listen string, token, insecureNoAuth, tls bool) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", listen, err)
	}
	loopback := httplimit.IsLoopbackHost(host)
	switch {
	case token && insecureNoAuth:
		return errors.New("--insecure-no-auth and a token (--token-file or " + TokenEnv + ") contradict each other")
	case insecureNoAuth && !loopback:
		return fmt.Errorf("--insecure-no-auth is allowed on a loopback address only, not %s: join scripts carry the site's private keys; give a token with --token-file", listen)
	case !token && !insecureNoAuth:
		return fmt.Errorf("no token: join scripts carry the site's private keys, so the API requires a bearer token; give one with --token-file FILE (or %s), or pass --insecure-no-auth on a loopback address", TokenEnv)
	case !loopback && !tls:
		return fmt.Errorf("--listen %s is not a loopback address: the bearer token and the join scripts' keys must not cross the network in clear; give --tls-cert and --tls-key", listen)
	}
	return nil
}

// Serve runs the handler on ln until ctx ends (httplimit.Serve).
func Serve(ctx context.Context, ln net.Listener, h http.Handler, certFile, keyFile string, t httplimit.ServerTimeouts) error {
	return httplimit.Serve(ctx, ln, h, certFile, keyFile, t)
}
