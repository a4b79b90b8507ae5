package siteflags

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// Completion is a cobra ValidArgsFunction or flag completion function.
type Completion func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective)

// complete suggests the names list returns that start with what was typed
// and are not given already: for the first argument only, unless many (a
// command that takes several names, or a flag's value).
func complete(many bool, list func() ([]string, error)) Completion {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 && !many {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names, err := list()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, n := range names {
			if strings.HasPrefix(n, toComplete) && !slices.Contains(args, n) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompletePhases suggests the phase names of the current site (see complete for many).
func (o *Options) CompletePhases(many bool) Completion {
	return complete(many, func() ([]string, error) {
		site, err := o.Site()
		if err != nil {
			return nil, err
		}
		phases, err := site.Phases()
		if err != nil {
			return nil, err
		}
		var names []string
		for _, p := range phases {
			names = append(names, p.Name())
		}
		return names, nil
	})
}

// CompletePlans suggests the plan names of the current site (see complete for many).
func (o *Options) CompletePlans(many bool) Completion {
	return complete(many, func() ([]string, error) {
		site, err := o.Site()
		if err != nil {
			return nil, err
		}
		plans, err := site.Plans()
		if err != nil {
			return nil, err
		}
		var names []string
		for _, p := range plans {
			names = append(names, p.Doc.Name())
		}
		return names, nil
	})
}

// CompleteClusters suggests the cluster names of the site's ClusterMap (see complete for many).
func (o *Options) CompleteClusters(many bool) Completion {
	return complete(many, func() ([]string, error) {
		site, err := o.Site()
		if err != nil {
			return nil, err
		}
		cm, err := site.ClusterMap()
		if err != nil || cm == nil {
			return nil, err
		}
		var names []string
		for n := range cm.Map {
			names = append(names, n)
		}
		return names, nil
	})
}

// CompleteContexts suggests the context names of the airshipctl config (see complete for many).
func (o *Options) CompleteContexts(many bool) Completion {
	return complete(many, func() ([]string, error) {
		cfg, err := o.Config()
		if err != nil {
			return nil, err
		}
		var names []string
		for n := range cfg.Contexts {
			names = append(names, n)
		}
		return names, nil
	})
}
