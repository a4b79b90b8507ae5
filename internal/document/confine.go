package document

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/airshipit/airship-go/internal/fileutil"
)

// OutsideError is a file of the site a build was about to read that
// resolves outside the directory the build is confined to
// (BuildOptions.Confine) through a symbolic link.
type OutsideError struct {
	// Path is the path the build asked for.
	Path string
	// Link is the symbolic link on Path that leads outside, when one
	// does.
	Link string
	// Target is where Path resolves to.
	Target string
	// Root is the directory the build is confined to.
	Root string
}

func (e *OutsideError) Error() string {
	if e.Link != "" {
		return fmt.Sprintf("%s: symbolic link %s leads to %s, outside the site's target path %s: refused", e.Path, e.Link, e.Target, e.Root)
	}
	return fmt.Sprintf("%s resolves to %s, outside the site's target path %s: refused", e.Path, e.Target, e.Root)
}

// confinedFS refuses to read a file, or resolve a directory, of the root
// that a symbolic link leads outside it. Only the disk has links; a path
// that does not exist is left for the read to report.
type confinedFS struct {
	filesys.FileSystem
	root     string // absolute, cleaned
	realRoot string // root, links followed

	mu  sync.Mutex
	err error
}

func newConfinedFS(fs filesys.FileSystem, root string) (*confinedFS, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("site target path %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("site target path %s: %w", root, err)
	}
	return &confinedFS{FileSystem: fs, root: filepath.Clean(abs), realRoot: real}, nil
}

// check returns an *OutsideError when path lies in the root but a
// symbolic link in it leads outside. A path written to lead outside the
// root (an absolute path, or ../ past it) is the site's explicit choice
// and is read as written.
func (c *confinedFS) check(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil || !fileutil.Within(abs, c.root) {
		return nil
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil // does not exist (or not on disk): the read says so
	}
	if fileutil.Within(real, c.realRoot) {
		return nil
	}
	e := &OutsideError{Path: path, Target: real, Root: c.root}
	// Name the first link below the root that leads outside.
	p := c.root
	rest, _ := filepath.Rel(c.root, abs)
	for _, part := range strings.Split(rest, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if t, err := filepath.EvalSymlinks(p); err == nil && !fileutil.Within(t, c.realRoot) {
				e.Link = p
				break
			}
		}
	}
	return c.fail(e)
}

func (c *confinedFS) fail(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	return err
}

// firstErr is the first refusal; nil on a nil confinedFS.
func (c *confinedFS) firstErr() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *confinedFS) ReadFile(path string) ([]byte, error) {
	if err := c.check(path); err != nil {
		return nil, err
	}
	return c.FileSystem.ReadFile(path)
}

func (c *confinedFS) ReadDir(path string) ([]string, error) {
	if err := c.check(path); err != nil {
		return nil, err
	}
	return c.FileSystem.ReadDir(path)
}

func (c *confinedFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	if err := c.check(path); err != nil {
		return "", "", err
	}
	return c.FileSystem.CleanedAbs(path)
}

func (c *confinedFS) Open(path string) (filesys.File, error) {
	if err := c.check(path); err != nil {
		return nil, err
	}
	return c.FileSystem.Open(path)
}
