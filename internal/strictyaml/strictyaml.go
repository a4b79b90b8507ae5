package strictyaml

import (
	"errors"
	"strings"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Unmarshal decodes YAML (or JSON, which is YAML) into a Go type with JSON
// tags, failing on unknown fields and on a key repeated in one mapping.
func Unmarshal(data []byte, into any) error {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return err
	}
	return UnmarshalJSON(j, into)
}

// UnmarshalJSON is Unmarshal for input already known to be JSON (no YAML
// conversion), and also fails on a duplicate field.
func UnmarshalJSON(data []byte, into any) error {
	strict, err := kjson.UnmarshalStrict(data, into)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		// Every offending field at once, so a file is fixed in one go.
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}
