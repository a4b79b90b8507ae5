// Package harness is what every benchmark of bench/ shares: the Row a
// benchmark records for the closing table, the one table printer, sizes
// and binaries handed down by `make bench`, peak RSS and CPU of a process,
// the API server's request counters read around a run, and Main, the
// TestMain of every benchmark package (quiet client logs, and the child
// modes a test binary is re-executed in).
//
// A benchmark measures inside testing.B and, once its loop is done, calls
// Record with one Row per comparison. When $BENCH_RESULTS names a file (as
// `make bench` sets it) the row is appended to it as a JSON line; the runner
// in bench/internal/suite reads them back and prints them with Markdown.
package harness
