package clitest

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// CheckExamples walks the command tree under root and fails t for every
// runnable command without an Example, and for every example line that
// runs the binary with a subcommand or flag the tree does not have.
func CheckExamples(t testing.TB, root *cobra.Command) {
	t.Helper()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c.Hidden || c.Name() == "help" || isCompletion(c) {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no Example", c.CommandPath())
			return
		}
		for _, line := range commandLines(c.Example) {
			args := strings.Fields(line)
			if len(args) == 0 || args[0] != root.Name() {
				continue
			}
			found, rest, err := root.Find(args[1:])
			if err != nil {
				t.Errorf("%q example %q: %v", c.CommandPath(), line, err)
				continue
			}
			if err := found.ParseFlags(rest); err != nil {
				t.Errorf("%q example %q: %v", c.CommandPath(), line, err)
			}
		}
	}
	walk(root)
}

func isCompletion(c *cobra.Command) bool {
	for p := c; p != nil; p = p.Parent() {
		if p.Name() == "completion" || p.Name() == cobra.ShellCompRequestCmd || p.Name() == cobra.ShellCompNoDescRequestCmd {
			return true
		}
	}
	return false
}

// commandLines joins continued lines, drops comments, and cuts each
// command at a shell redirection or pipe.
func commandLines(example string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(example, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\") + " ")
			continue
		}
		cur.WriteString(l)
		line := cur.String()
		cur.Reset()
		if i := strings.IndexAny(line, "|>"); i >= 0 {
			line = line[:i]
		}
		if strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	return out
}
