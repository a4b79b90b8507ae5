package armadacmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/cli"
)

func TestConvertFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    ConvertOptions
		wantErr bool
	}{
		{args: []string{"a.yaml", "b.yaml"}, want: ConvertOptions{Files: []string{"a.yaml", "b.yaml"}, Output: "yaml"}},
		{args: []string{"-n", "site", "-o", "json", "a.yaml"}, want: ConvertOptions{Files: []string{"a.yaml"}, Namespace: "site", Output: "json"}},
		{args: []string{"--allow-dangling", "a.yaml"}, want: ConvertOptions{Files: []string{"a.yaml"}, Output: "yaml", AllowDangling: true}},
		{args: []string{}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *ConvertOptions
			cmd := NewCmdConvert(cli.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, func(o *ConvertOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tt.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.Files, ",") != strings.Join(tt.want.Files, ",") || got.Namespace != tt.want.Namespace || got.Output != tt.want.Output || got.AllowDangling != tt.want.AllowDangling {
				t.Fatalf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// TestConvertRun converts the golden input of internal/armada/convert and
// checks output, warnings on stderr and errors naming the file.
func TestConvertRun(t *testing.T) {
	in := filepath.Join("..", "..", "armada", "convert", "testdata", "sequenced", "input.yaml")
	want, err := os.ReadFile(filepath.Join("..", "..", "armada", "convert", "testdata", "sequenced", "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := runConvert(&ConvertOptions{Streams: cli.IOStreams{Out: &out, ErrOut: &errOut}, Files: []string{in}, Namespace: "site", Output: "yaml"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Fatalf("output differs from the converter's golden file:\n%s", out.String())
	}

	v1 := filepath.Join("..", "..", "armada", "convert", "testdata", "v1-forms", "input.yaml")
	out.Reset()
	if err := runConvert(&ConvertOptions{Streams: cli.IOStreams{Out: &out, ErrOut: &errOut}, Files: []string{v1}, Output: "yaml"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), `warning: `+v1) || !strings.Contains(errOut.String(), `data.timeout dropped`) {
		t.Fatalf("stderr does not warn about the dropped field: %q", errOut.String())
	}

	err = runConvert(&ConvertOptions{Streams: cli.IOStreams{Out: &out, ErrOut: &errOut, In: strings.NewReader("schema: armada/Chart/v2\nmetadata: {name: x}\ndata: {}\n")}, Files: []string{"-"}, Output: "yaml"})
	if err == nil || !strings.Contains(err.Error(), "<stdin>") || !strings.Contains(err.Error(), "data.release") {
		t.Fatalf("err = %v, want it to name <stdin> and data.release", err)
	}
	if err := runConvert(&ConvertOptions{Streams: cli.IOStreams{Out: &out, ErrOut: &errOut}, Files: []string{in}, Output: "table"}); err == nil {
		t.Fatal("--output table should be rejected")
	}
}

// TestConvertWritesNothingOnProblems gives two files, each with a problem,
// and checks that both are reported, that nothing reaches stdout, and that
// --allow-dangling relaxes only references.
func TestConvertWritesNothingOnProblems(t *testing.T) {
	dir := t.TempDir()
	charts := filepath.Join(dir, "charts.yaml")
	groups := filepath.Join(dir, "groups.yaml")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(charts, "schema: armada/Chart/v2\nmetadata: {name: c}\ndata: {release: c, namespace: ns, source: {type: local, location: /c}, wait: {timeout: soon}}\n")
	write(groups, "schema: armada/ChartGroup/v2\nmetadata: {name: g}\ndata: {chart_group: [c, missing]}\n")
	var out, errOut bytes.Buffer
	err := runConvert(&ConvertOptions{Streams: cli.IOStreams{Out: &out, ErrOut: &errOut}, Files: []string{charts, groups, filepath.Join(dir, "nope.yaml")}, Output: "yaml"})
	if err == nil {
		t.Fatal("converted broken documents")
	}
	for _, want := range []string{"nothing written", "3 problems", charts + `: document 0 (armada/Chart/v2 "c"): data: wait.timeout`, groups + `: document 0 (armada/ChartGroup/v2 "g"): data.chart_group[1]`, "nope.yaml: no such file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if out.Len() != 0 {
		t.Errorf("wrote output despite problems:\n%s", out.String())
	}

	// A partial tree: the group alone, dangling allowed.
	write(charts, "schema: armada/Chart/v2\nmetadata: {name: c}\ndata: {release: c, namespace: ns, source: {type: local, location: /c}}\n")
	out.Reset()
	if err := runConvert(&ConvertOptions{Streams: cli.IOStreams{Out: &out, ErrOut: &errOut}, Files: []string{charts, groups}, Output: "yaml", AllowDangling: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kind: ArmadaChartGroup") {
		t.Errorf("output:\n%s", out.String())
	}
}
