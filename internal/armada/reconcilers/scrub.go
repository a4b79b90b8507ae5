package reconcilers

import (
	"fmt"
	"sort"
	"strings"
)

// minSecretLen is the shortest value string scrubbed from messages; shorter
// ones (true, 1, ...) would mangle every message and are poor secrets.
const minSecretLen = 4

// scrubber replaces every string found in values with "***".
type scrubber []string

func newScrubber(values map[string]any) scrubber {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, x := range t {
				walk(x)
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		case string:
			if len(t) >= minSecretLen {
				seen[t] = true
			}
		default:
			if t != nil {
				if s := fmt.Sprint(t); len(s) >= minSecretLen+2 {
					seen[s] = true
				}
			}
		}
	}
	walk(values)
	out := make(scrubber, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	// Longest first, so a secret containing another is replaced whole.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func (s scrubber) clean(msg string) string {
	for _, v := range s {
		msg = strings.ReplaceAll(msg, v, "***")
	}
	return msg
}
