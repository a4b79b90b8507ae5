package output

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
)

type item struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func TestPrint(t *testing.T) {
	v := []item{{"a", 1}, {"bb", 22}}
	table := func(tw *tabwriter.Writer) {
		Row(tw, "NAME", "COUNT")
		for _, i := range v {
			Row(tw, i.Name, i.Count)
		}
	}
	tests := []struct {
		format, want string
	}{
		{Table, "NAME   COUNT\na      1\nbb     22\n"},
		{JSON, "[\n  {\n    \"name\": \"a\",\n    \"count\": 1\n  },\n  {\n    \"name\": \"bb\",\n    \"count\": 22\n  }\n]\n"},
		{YAML, "- count: 1\n  name: a\n- count: 22\n  name: bb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Print(&buf, tt.format, v, table); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tt.want {
				t.Errorf("got:\n%q\nwant:\n%q", buf.String(), tt.want)
			}
		})
	}
	if err := Print(&bytes.Buffer{}, "xml", v, table); err == nil || !strings.Contains(err.Error(), "table, yaml, json") {
		t.Errorf("unknown format: %v", err)
	}
}
