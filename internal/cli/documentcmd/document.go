package documentcmd

import (
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	"github.com/airshipit/airship-go/internal/redact"
	"github.com/airshipit/airship-go/internal/repository"
)

// NewCmd returns `airshipctl document`.
func NewCmd(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	cmd := &cobra.Command{Use: "document", Short: "Work with the site's document repositories"}
	cmd.AddCommand(newPull(streams, g))
	return cmd
}

func newPull(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var noCheckout bool
	opts := repository.Options{}
	cmd := &cobra.Command{
		Use:   "pull",
		Short: "Clone or update every repository of the current manifest into its target path",
		Long: `Clone or update every repository of the current context's manifest into
targetPath/<directory named after its URL>, then check out the revision its
checkout names (branch, tag, commitHash or remoteRef; the remote's default
branch when none). A working tree with local changes is refused unless the
repository's checkout sets force. Auth comes from the repository's auth
(http-basic, ssh-key, ssh-pass). Every repository's settings are checked
before anything is fetched.

Each repository's pull stops after --timeout and when more than
--max-fetch-bytes arrive (over HTTP(S) or ssh). URLs are printed redacted: a
password, a token in the user name, a query and a fragment show as
REDACTED.`,
		Example: `  airshipctl document pull
  airshipctl document pull --no-checkout`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.Config()
			if err != nil {
				return err
			}
			site, err := cfg.Manifest("")
			if err != nil {
				return err
			}
			names := slices.Sorted(maps.Keys(site.Manifest.Repositories))
			if len(names) == 0 {
				return fmt.Errorf("manifest %q has no repositories to pull", site.Name)
			}
			dirs := map[string]string{}
			for _, name := range names {
				if err := repository.Check(name, site.Manifest.Repositories[name]); err != nil {
					return fmt.Errorf("manifest %q: %w", site.Name, err)
				}
				if dirs[name], err = site.RepositoryDir(name); err != nil {
					return err
				}
			}
			for _, name := range names {
				r := site.Manifest.Repositories[name]
				opts.NoCheckout = noCheckout
				res, err := repository.Pull(cmd.Context(), name, r, dirs[name], opts)
				if err != nil {
					return fmt.Errorf("manifest %q: %w", site.Name, err)
				}
				if res.Revision == "" {
					fmt.Fprintf(streams.Out, "%s: %s %s into %s (not checked out)\n", name, res.Action, redact.URL(r.URL), dirs[name])
					continue
				}
				fmt.Fprintf(streams.Out, "%s: %s %s into %s at %s\n", name, res.Action, redact.URL(r.URL), dirs[name], res.Revision)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&noCheckout, "no-checkout", false, "fetch only: leave the working trees as they are")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", repository.DefaultTimeout, "time limit of each repository's pull")
	cmd.Flags().Int64Var(&opts.MaxFetchBytes, "max-fetch-bytes", repository.DefaultMaxFetchBytes, "cap on the bytes each repository's pull receives (HTTP(S) or ssh)")
	return cmd
}
