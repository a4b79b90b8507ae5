package metal3

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

var quoted = regexp.MustCompile(`"[^"]*"`)

// logSummary counts the operator's log lines (it runs with
// --zap-log-level=error): its errors, with the commonest messages, and
// client-go's notes on waiting for the client-side rate limiter.
func logSummary(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close() //nolint:errcheck
	lines, errs, throttled := 0, 0, 0
	byMsg := map[string]int{}
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		lines++
		line := s.Text()
		if strings.Contains(line, "client-side throttling") {
			throttled++
		}
		var entry struct {
			Level, Msg, Error string
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Level == "error" {
			errs++
			msg := entry.Msg
			if entry.Error != "" {
				msg += ": " + entry.Error
			}
			// One line per kind of error, not per host.
			msg = quoted.ReplaceAllString(msg, `"…"`)
			if len(msg) > 160 {
				msg = msg[:160] + "..."
			}
			byMsg[msg]++
		}
	}
	out := fmt.Sprintf("%d lines, %d errors, %d throttling notes", lines, errs, throttled)
	type kv struct {
		msg string
		n   int
	}
	var top []kv
	for m, n := range byMsg {
		top = append(top, kv{m, n})
	}
	slices.SortFunc(top, func(a, b kv) int { return b.n - a.n })
	for i, e := range top {
		if i == 3 {
			break
		}
		out += fmt.Sprintf("; %dx %q", e.n, e.msg)
	}
	return out
}
