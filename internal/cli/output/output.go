package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Formats accepted by -o.
const (
	Table = "table"
	YAML  = "yaml"
	JSON  = "json"
)

// Validate checks an -o value.
func Validate(format string) error {
	switch format {
	case Table, YAML, JSON:
		return nil
	}
	return fmt.Errorf("unknown output format %q: use one of table, yaml, json", format)
}

// Print writes v as YAML or JSON, or calls table for the table format.
func Print(w io.Writer, format string, v any, table func(*tabwriter.Writer)) error {
	switch format {
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case YAML:
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	case Table, "":
		tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
		table(tw)
		return tw.Flush()
	}
	return Validate(format)
}

// Row writes one tab-separated table row.
func Row(w io.Writer, cells ...any) {
	s := make([]string, len(cells))
	for i, c := range cells {
		s[i] = fmt.Sprint(c)
	}
	fmt.Fprintln(w, strings.Join(s, "\t"))
}

// AddFlag registers -o/--output on cmd with table as the default, and shell
// completion of the formats. Commands check the value with Validate (Print
// does too).
func AddFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "output", "o", Table, "output format: table, yaml or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{Table, YAML, JSON}, cobra.ShellCompDirectiveNoFileComp))
}

// WriteStream writes a YAML document stream as it is ("yaml"), or as a
// JSON List of its documents ("json"), as kubectl prints several objects.
func WriteStream(w io.Writer, format string, stream []byte) error {
	switch format {
	case YAML, "":
		_, err := w.Write(stream)
		return err
	case JSON:
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
		items := []json.RawMessage{}
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				return err
			}
			if string(j) == "null" {
				continue
			}
			items = append(items, j)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	}
	return fmt.Errorf("unknown output format %q: use yaml or json", format)
}
