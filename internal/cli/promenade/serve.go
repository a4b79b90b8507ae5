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

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/promenade/server"
)

// TokenEnv names the environment variable holding the API bearer token.
const TokenEnv = "PROMENADE_API_TOKEN"

func newServeCmd(streams cli.IOStreams) *cobra.Command {
	var (
		listen, certFile, keyFile, tokenFile string
		opts                                 server.Options
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the Promenade API (join scripts, design validation, health, versions)",
		Long: `Serves:
  GET  /api/v1.0/join-scripts?hostname=&ip=&design_ref=[&labels.static=][&labels.dynamic=][&leave_kubectl=]
  POST /api/v1.0/validatedesign   {"href": "<design_ref>"}
  GET  /api/v1.0/health
  GET  /api/v1.0/versions
design_ref is a file or directory path, a file:// URL or an http(s) URL of a
YAML document set that includes the generated certificates.

With --tls-cert and --tls-key the API is served over HTTPS. With a token
(--token-file, or the ` + TokenEnv + ` environment variable), join-scripts and
validatedesign require "Authorization: Bearer <token>".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (certFile == "") != (keyFile == "") {
				return errors.New("--tls-cert and --tls-key go together")
			}
			opts.Token = os.Getenv(TokenEnv)
			if tokenFile != "" {
				b, err := os.ReadFile(tokenFile)
				if err != nil {
					return err
				}
				opts.Token = strings.TrimSpace(string(b))
				if opts.Token == "" {
					return fmt.Errorf("token file %s is empty", tokenFile)
				}
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			scheme := "http"
			if certFile != "" {
				scheme = "https"
			}
			fmt.Fprintf(streams.Out, "promenade API listening on %s://%s (token required: %v)\n", scheme, ln.Addr(), opts.Token != "")
			return Serve(cmd.Context(), ln, server.New(opts), certFile, keyFile)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:9000", "address to listen on")
	f.StringVar(&certFile, "tls-cert", "", "PEM certificate (chain) to serve HTTPS with")
	f.StringVar(&keyFile, "tls-key", "", "PEM private key of --tls-cert")
	f.StringVar(&tokenFile, "token-file", "", "file holding the bearer token clients must send (overrides "+TokenEnv+")")
	f.StringVar(&opts.DesignRoot, "design-root", "", "confine file design_refs to this directory")
	return cmd
}

// Serve runs the handler on ln until ctx ends, then shuts down gracefully.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, certFile, keyFile string) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() {
		if certFile != "" {
			errc <- srv.ServeTLS(ln, certFile, keyFile)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return err
		}
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
