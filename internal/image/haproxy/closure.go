package haproxy

import (
	"debug/elf"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Lib is a file a dynamic binary needs at run time.
type Lib struct {
	// Path is where the loader looks for it, and where it goes in the
	// image.
	Path string
	// Source is the regular file Path resolves to on this machine.
	Source string
}

// multiarch is the Debian multiarch triplet of an ELF machine.
var multiarch = map[elf.Machine]string{
	elf.EM_X86_64:  "x86_64-linux-gnu",
	elf.EM_AARCH64: "aarch64-linux-gnu",
	elf.EM_386:     "i386-linux-gnu",
	elf.EM_ARM:     "arm-linux-gnueabihf",
}

// searchDirs are the dynamic loader's default directories for a machine,
// in its order, when there is no /etc/ld.so.cache (as in the image).
func searchDirs(m elf.Machine) []string {
	var dirs []string
	if t, ok := multiarch[m]; ok {
		dirs = append(dirs, "/lib/"+t, "/usr/lib/"+t)
	}
	return append(dirs, "/lib64", "/usr/lib64", "/lib", "/usr/lib")
}

// Closure returns the ELF interpreter of binary and every shared library it
// needs, directly or through another, sorted by path. A library missing, or
// only present for another machine or class, is an error naming it and
// who needs it.
func Closure(binary string) ([]Lib, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", binary, err)
	}
	defer func() { _ = f.Close() }() // only read
	machine, class := f.Machine, f.Class
	found := map[string]Lib{}
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return nil, fmt.Errorf("%s: reading PT_INTERP: %w", binary, err)
		}
		interp := strings.TrimRight(string(b), "\x00")
		src, err := resolve(interp)
		if err != nil {
			return nil, fmt.Errorf("%s: interpreter %s: %w", binary, interp, err)
		}
		found[interp] = Lib{Path: interp, Source: src}
	}
	// Needed names already placed, and the queue of files to read.
	placed := map[string]bool{}
	type item struct{ name, path string }
	queue := []item{{binary, binary}}

	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		needed, runpath, err := dynamic(it.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.path, err)
		}
		for _, n := range needed {
			if placed[n] {
				continue
			}
			placed[n] = true
			dirs := append(expandOrigin(runpath, path.Dir(it.path)), searchDirs(machine)...)
			lib, err := find(n, dirs, machine, class)
			if err != nil {
				return nil, fmt.Errorf("%s, needed by %s: %w", n, it.path, err)
			}
			if _, ok := found[lib.Path]; !ok {
				found[lib.Path] = lib
				queue = append(queue, item{n, lib.Path})
			}
		}
	}
	libs := make([]Lib, 0, len(found))
	for _, l := range found {
		libs = append(libs, l)
	}
	sort.Slice(libs, func(i, j int) bool { return libs[i].Path < libs[j].Path })
	return libs, nil
}

// dynamic reads the DT_NEEDED names of an ELF file and its DT_RUNPATH (or,
// without one, DT_RPATH) directories.
func dynamic(file string) (needed, runpath []string, err error) {
	f, err := elf.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = f.Close() }() // only read
	if needed, err = f.DynString(elf.DT_NEEDED); err != nil {
		return nil, nil, err
	}
	rp, err := f.DynString(elf.DT_RUNPATH)
	if err != nil {
		return nil, nil, err
	}
	if len(rp) == 0 {
		if rp, err = f.DynString(elf.DT_RPATH); err != nil {
			return nil, nil, err
		}
	}
	for _, r := range rp {
		runpath = append(runpath, filepath.SplitList(r)...)
	}
	return needed, runpath, nil
}

func expandOrigin(dirs []string, origin string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", origin), "$ORIGIN", origin)
		if path.IsAbs(d) {
			out = append(out, d)
		}
	}
	return out
}

// find looks for the library name in dirs, as the loader does: the first
// file of the binary's machine and class.
func find(name string, dirs []string, machine elf.Machine, class elf.Class) (Lib, error) {
	if strings.Contains(name, "/") {
		dirs, name = []string{path.Dir(name)}, path.Base(name)
	}
	for _, d := range dirs {
		p := path.Join(d, name)
		src, err := resolve(p)
		if err != nil {
			continue
		}
		f, err := elf.Open(src)
		if err != nil {
			continue
		}
		ok := f.Machine == machine && f.Class == class
		_ = f.Close() // only read
		if ok {
			return Lib{Path: p, Source: src}, nil
		}
	}
	return Lib{}, fmt.Errorf("not found in %s", strings.Join(dirs, ", "))
}

// resolve returns the regular file p is or links to.
func resolve(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", real)
	}
	return real, nil
}
