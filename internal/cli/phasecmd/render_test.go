package phasecmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
)

// TestRenderFlags checks what `phase render` makes of its command line,
// through the injected run function: no site is read.
func TestRenderFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    RenderOptions
		wantErr string
	}{
		{name: "defaults", args: []string{"p"}, want: RenderOptions{Phase: "p", Source: SourcePhase, Output: "yaml"}},
		{name: "every filter", args: []string{"p", "-s", "executor", "-l", "app=web", "-a", "a=b", "-g", "apps/v1", "-k", "Deployment", "-o", "json"},
			want: RenderOptions{Phase: "p", Source: SourceExecutor, Labels: "app=web", Annotation: "a=b", APIVersion: "apps/v1", Kind: "Deployment", Output: "json"}},
		{name: "whole bundle needs no name", args: []string{"--source", "config"}, want: RenderOptions{Source: SourceConfig, Output: "yaml"}},
		{name: "name required", args: []string{"--source", "executor"}, wantErr: "a phase NAME is required with --source executor"},
		{name: "bad source", args: []string{"p", "--source", "cluster"}, wantErr: `--source "cluster"`},
		{name: "bad output", args: []string{"p", "-o", "table"}, wantErr: `--output "table": use yaml or json`},
		{name: "two names", args: []string{"p", "q"}, wantErr: "accepts at most 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *RenderOptions
			streams := cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
			cmd := NewCmdRender(streams, &siteflags.Options{}, func(_ context.Context, o *RenderOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if got != nil {
					t.Error("the run function ran despite the error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g := *got
			g.Streams, g.Global = cli.IOStreams{}, nil
			if g != tt.want {
				t.Errorf("options %+v, want %+v", g, tt.want)
			}
		})
	}
}
