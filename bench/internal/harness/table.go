package harness

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// RatioHeader is the ratio column's heading: it says which way is better.
const RatioHeader = "peer/ours (>1: ours faster)"

// Markdown prints rows as one Markdown table, columns padded so it reads in
// a terminal too, followed by a numbered list naming what ran on each side
// of each row and its notes. It is the one table printer of bench/.
func Markdown(w io.Writer, rows []Row) error {
	header := []string{"#", "workload", "size", "ours", "peer", RatioHeader, "our peak RSS", "parallelism", "cluster state"}
	cells := [][]string{header}
	for i, r := range rows {
		cells = append(cells, []string{
			fmt.Sprint(i + 1), r.Workload, r.Size, Seconds(r.OursSeconds), Seconds(r.PeerSeconds),
			fmt.Sprintf("%.2f", r.Ratio()), fmt.Sprintf("%.0f MiB", r.OursPeakRSSMiB), r.Parallelism, r.Cluster,
		})
	}
	width := make([]int, len(header))
	for i := range width {
		width[i] = 3 // a Markdown delimiter cell needs room for ":-:"
	}
	for _, row := range cells {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	line := func(row []string) {
		b.WriteString("|")
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if numeric(i) {
				b.WriteString(" " + pad + c + " |")
			} else {
				b.WriteString(" " + c + pad + " |")
			}
		}
		b.WriteString("\n")
	}
	line(cells[0])
	b.WriteString("|")
	for i, n := range width {
		if numeric(i) {
			b.WriteString(" " + strings.Repeat("-", n-1) + ": |")
		} else {
			b.WriteString(" " + strings.Repeat("-", n) + " |")
		}
	}
	b.WriteString("\n")
	for _, row := range cells[1:] {
		line(row)
	}
	b.WriteString("\n")
	for i, r := range rows {
		runs := "1 run"
		if r.Runs != 1 {
			runs = fmt.Sprintf("mean of %d runs", r.Runs)
		}
		if i > 0 && sameSides(rows[i-1], r) {
			fmt.Fprintf(&b, "%d. as %d (%s).\n", i+1, i, runs)
			continue
		}
		fmt.Fprintf(&b, "%d. ours: %s; peer: %s (%s).\n", i+1, r.Ours, r.Peer, runs)
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "   - %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sameSides reports rows whose description is the same: only the figures,
// size or parallelism differ.
func sameSides(a, b Row) bool {
	return a.Ours == b.Ours && a.Peer == b.Peer && slices.Equal(a.Notes, b.Notes)
}

// numeric reports the right-aligned columns: #, ours, peer, ratio, RSS.
func numeric(col int) bool {
	switch col {
	case 0, 3, 4, 5, 6:
		return true
	}
	return false
}

// Seconds formats a duration in seconds with about three significant digits.
func Seconds(s float64) string {
	switch {
	case s < 0.1:
		return fmt.Sprintf("%.1f ms", s*1000)
	case s < 10:
		return fmt.Sprintf("%.2f s", s)
	case s < 100:
		return fmt.Sprintf("%.1f s", s)
	default:
		return fmt.Sprintf("%.0f s", s)
	}
}
