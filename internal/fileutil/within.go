package fileutil

import (
	"path/filepath"
	"strings"
)

// Within reports whether path is dir or lies under it, both cleaned and
// absolute (or both relative to the same directory); it compares whole
// path elements, so /a/bc is not within /a/b. Symbolic links are not
// followed: resolve them first (filepath.EvalSymlinks) where they matter.
func Within(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	return path == dir || dir == string(filepath.Separator) || strings.HasPrefix(path, dir+string(filepath.Separator))
}
