// Command funclen lists the functions whose declaration spans more than
// -max lines, longest first, so that a review can see which ones would read
// better as named stages. Test files and generated files are skipped: a long
// table test or deepcopy function is not the kind of length it is after.
//
//	go run ./hack/funclen -max 80 ./...
//
// It prints "file:line name length" a line and, last, the count, and always
// exits 0 unless it cannot read its arguments: it reports, it does not gate.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// funcLen is one function found longer than the limit.
type funcLen struct {
	pos   token.Position
	name  string
	lines int
}

func main() {
	maxLines := flag.Int("max", 80, "report functions longer than this many lines")
	flag.Parse()
	roots := flag.Args()
	if len(roots) == 0 {
		roots = []string{"./..."}
	}
	var found []funcLen
	fset := token.NewFileSet()
	for _, root := range roots {
		fl, err := scan(fset, root, *maxLines)
		if err != nil {
			fmt.Fprintf(os.Stderr, "funclen: %v\n", err)
			os.Exit(1)
		}
		found = append(found, fl...)
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].lines != found[j].lines {
			return found[i].lines > found[j].lines
		}
		return found[i].pos.String() < found[j].pos.String()
	})
	for _, f := range found {
		fmt.Printf("%s:%d %s %d\n", f.pos.Filename, f.pos.Line, f.name, f.lines)
	}
	fmt.Printf("%d functions over %d lines\n", len(found), *maxLines)
}

// scan walks root ("dir" or "dir/..." in the go tool's sense) and returns the
// functions in its non-test Go files that are longer than maxLines.
func scan(fset *token.FileSet, root string, maxLines int) ([]funcLen, error) {
	recursive := false
	if rest, ok := strings.CutSuffix(root, "..."); ok {
		recursive = true
		root = strings.TrimSuffix(rest, "/")
		if root == "" || root == "." {
			root = "."
		}
	}
	var found []funcLen
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			name := d.Name()
			// The go tool ignores these too; vendor and testdata hold no code of ours.
			if !recursive || name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fl, err := scanFile(fset, path, maxLines)
		if err != nil {
			return err
		}
		found = append(found, fl...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", root, err)
	}
	return found, nil
}

// scanFile parses one file and returns its long functions; generated files
// return none.
func scanFile(fset *token.FileSet, path string, maxLines int) ([]funcLen, error) {
	file, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	if ast.IsGenerated(file) {
		return nil, nil
	}
	var found []funcLen
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start := fset.Position(fn.Pos())
		lines := fset.Position(fn.End()).Line - start.Line + 1
		if lines > maxLines {
			found = append(found, funcLen{pos: start, name: funcName(fn), lines: lines})
		}
	}
	return found, nil
}

// funcName names a method by its receiver type too, as "Type.Method", so that
// two methods of the same name stay apart in the list.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	for {
		switch tt := t.(type) {
		case *ast.StarExpr:
			t = tt.X
			continue
		case *ast.IndexExpr:
			t = tt.X
			continue
		case *ast.IndexListExpr:
			t = tt.X
			continue
		case *ast.Ident:
			return tt.Name + "." + fn.Name.Name
		}
		return fn.Name.Name
	}
}
