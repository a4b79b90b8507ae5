package apply

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Bounds of a drift description.
const (
	maxDriftLines = 50
	maxDriftValue = 200
)

// driftIgnored are the fields the server owns: never drift.
var driftIgnored = []string{"metadata.resourceVersion", "metadata.generation", "metadata.managedFields", "metadata.uid", "metadata.creationTimestamp", "status"}

// Drift lists where a live object differs from what applying its document
// would make of it (the server's dry run), one line per field:
// "path: live → applied", "path: added live" and so on. Values are JSON,
// cut at 200 characters; at most 50 lines. Secrets' values come masked
// from the dry run.
func Drift(live, applied *unstructured.Unstructured) []string {
	var out []string
	walkDrift("", live.Object, applied.Object, &out)
	slices.Sort(out)
	if len(out) > maxDriftLines {
		out = append(out[:maxDriftLines], fmt.Sprintf("… and %d more", len(out)-maxDriftLines))
	}
	return out
}

func walkDrift(path string, live, applied any, out *[]string) {
	for _, ig := range driftIgnored {
		if path == ig {
			return
		}
	}
	lm, lok := live.(map[string]any)
	am, aok := applied.(map[string]any)
	if lok && aok {
		keys := map[string]bool{}
		for k := range lm {
			keys[k] = true
		}
		for k := range am {
			keys[k] = true
		}
		for k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			lv, lin := lm[k]
			av, ain := am[k]
			switch {
			case !lin:
				walkDrift(p, nil, av, out)
			case !ain:
				walkDrift(p, lv, nil, out)
			default:
				walkDrift(p, lv, av, out)
			}
		}
		return
	}
	if reflect.DeepEqual(live, applied) {
		return
	}
	*out = append(*out, fmt.Sprintf("%s: %s → %s", path, driftValue(live), driftValue(applied)))
}

func driftValue(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > maxDriftValue {
		s = s[:maxDriftValue] + "…"
	}
	return strings.ToValidUTF8(s, "")
}
