// Command bench is `make bench`: it runs every workload of
// bench/internal/suite against its peer and prints one table.
//
//	go run ./bench/cmd/bench [-short] [-run REGEXP] [-workdir DIR]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"syscall"

	"github.com/airshipit/airship-go/bench/internal/suite"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

func main() {
	short := flag.Bool("short", false, "the short sizes (make bench SHORT=1), for routine use")
	run := flag.String("run", "", "only the workloads whose name matches this regular expression")
	workdir := flag.String("workdir", "", "where binaries, results.jsonl and logs go (default: a new temporary directory)")
	flag.Parse()
	if err := runMain(*short, *run, *workdir); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func runMain(short bool, run, workdir string) error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	o := suite.Options{Root: root, Short: short, WorkDir: workdir, Stdout: os.Stdout, Stderr: os.Stderr}
	if run != "" {
		if o.Match, err = regexp.Compile(run); err != nil {
			return fmt.Errorf("-run: %w", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return suite.Run(ctx, o)
}
