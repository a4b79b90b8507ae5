package genericcontainer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/fileutil"
)

// EnvPassEnv names the variable of airshipctl's environment that lists
// (separated by commas or spaces) the names a name-only envVars entry may
// take from it although they are secret-looking (passEnvGuarded): the
// person running airshipctl agrees to, the site cannot.
const EnvPassEnv = "AIRSHIP_PASS_ENV"

// envShellControl are variables that make bash (or the loader) run code
// before the script: never given, with or without a value.
var envShellControl = []string{"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "CDPATH", "GLOBIGNORE", "IFS"}

// envShellControlPrefixes are prefixes of such variables (exported
// functions, the loader's preloads and paths).
var envShellControlPrefixes = []string{"BASH_FUNC_", "LD_"}

// passEnvGuarded are prefixes of names a name-only entry takes from
// airshipctl's environment only when $AIRSHIP_PASS_ENV lists them: the
// keys SOPS decrypts the site's secrets with.
var passEnvGuarded = []string{"SOPS_"}

// checkEnvVar reports what is wrong with one envVars entry: a name that
// controls the shell, or a secret-looking name-only entry airshipctl's
// user did not allow (allowed lists $AIRSHIP_PASS_ENV).
func checkEnvVar(entry string, allowed []string) error {
	name, _, hasValue := strings.Cut(entry, "=")
	if slices.Contains(envShellControl, name) || hasAnyPrefix(name, envShellControlPrefixes) {
		return fmt.Errorf("%s changes what the shell or the loader runs and is never given to an image", name)
	}
	if !hasValue && hasAnyPrefix(name, passEnvGuarded) && !slices.Contains(allowed, name) {
		return fmt.Errorf("a name-only entry would hand airshipctl's own %s to the image; list it in $%s to allow that, or give a value", name, EnvPassEnv)
	}
	return nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// passEnvAllowed is $AIRSHIP_PASS_ENV as a list.
func passEnvAllowed(getenv func(string) string) []string {
	return strings.FieldsFunc(getenv(EnvPassEnv), func(r rune) bool { return r == ',' || r == ' ' })
}

// confinedSink is sinkOutputDir taken from the site directory, refused
// when it is absolute or leads outside the site directory, by .. or
// through a symbolic link.
func confinedSink(siteDir, sink string) (string, error) {
	if filepath.IsAbs(sink) {
		return "", fmt.Errorf("spec.sinkOutputDir %q is absolute; it is relative to the site directory %s", sink, siteDir)
	}
	p := filepath.Join(siteDir, sink)
	if !fileutil.Within(p, siteDir) {
		return "", fmt.Errorf("spec.sinkOutputDir %q leads outside the site directory %s", sink, siteDir)
	}
	if err := resolvesWithin(p, siteDir); err != nil {
		return "", fmt.Errorf("spec.sinkOutputDir %q: %w", sink, err)
	}
	return p, nil
}

// resolvesWithin checks that path stays in root once the symbolic links
// of the parts that exist are followed.
func resolvesWithin(path, root string) error {
	realRoot, err := resolveExisting(root)
	if err != nil {
		return err
	}
	real, err := resolveExisting(path)
	if err != nil {
		return err
	}
	if !fileutil.Within(real, realRoot) {
		return fmt.Errorf("%s leads to %s through a symbolic link, outside the site directory %s: refused", path, real, root)
	}
	return nil
}

// resolveExisting follows the symbolic links of the longest part of p
// that exists and keeps the rest as it is.
func resolveExisting(p string) (string, error) {
	p = filepath.Clean(p)
	existing, rest := p, ""
	for {
		if _, err := os.Lstat(existing); err == nil || existing == filepath.Dir(existing) {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", err
	}
	return filepath.Join(real, rest), nil
}

// writeConfined copies the files under staging into sink, refusing any
// path that resolves outside root or is a symbolic link: the output of
// an image never lands outside the site.
func writeConfined(staging, sink, root string) error {
	return filepath.WalkDir(staging, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(staging, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(sink, rel)
		if d.IsDir() {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			return resolvesWithin(dst, root)
		}
		if err := resolvesWithin(filepath.Dir(dst), root); err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		// O_NOFOLLOW: a symbolic link already at dst is not written through.
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			if errors.Is(err, syscall.ELOOP) {
				return fmt.Errorf("%s is a symbolic link: refused", dst)
			}
			return err
		}
		if _, err := f.Write(data); err != nil {
			_ = f.Close() // the write error is the one reported
			return err
		}
		return f.Close()
	})
}

// MaxReadOnlyCopyBytes caps what is copied for the rw: false mounts of
// one script run.
const MaxReadOnlyCopyBytes int64 = 256 << 20

// readOnlyMounts gives a script's rw: false bind mounts a private copy in
// dir, made read-only, in place of their source: what the script writes
// there reaches nothing (a script is no container, so nothing can be
// mounted read-only). rw: true mounts keep their source. A symbolic link
// in a source that leads outside it is refused.
func readOnlyMounts(mounts []v1.StorageMount, dir string) ([]v1.StorageMount, error) {
	out := make([]v1.StorageMount, len(mounts))
	budget := MaxReadOnlyCopyBytes
	for i, m := range mounts {
		out[i] = m
		if m.ReadWriteMode || m.Src == "" || (m.MountType != "" && m.MountType != "bind") {
			continue
		}
		dst := filepath.Join(dir, "mounts", fmt.Sprint(i), filepath.Base(m.Src))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return nil, err
		}
		if err := copyTree(m.Src, dst, &budget); err != nil {
			return nil, fmt.Errorf("spec.mounts[%d] (src %s, rw: false): making its read-only copy: %w", i, m.Src, err)
		}
		out[i].Src = dst
	}
	return out, nil
}

// copyTree copies src (a file or a directory) to dst and makes the copy
// read-only; a missing src leaves nothing at dst.
func copyTree(src, dst string, budget *int64) error {
	root, err := filepath.EvalSymlinks(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return err
			}
			if !fileutil.Within(real, root) {
				return fmt.Errorf("symbolic link %s leads to %s, outside the mount's source: refused", p, real)
			}
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.IsDir():
			return os.Mkdir(target, 0o700)
		case !d.Type().IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if *budget -= info.Size(); *budget < 0 {
			return fmt.Errorf("more than %d bytes to copy; set rw: true, or mount less", MaxReadOnlyCopyBytes)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer func() { _ = in.Close() }() // only read: closing cannot lose data
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o400|info.Mode().Perm()&0o500)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			_ = out.Close() // the copy error is the one reported
			return err
		}
		return out.Close()
	})
}

// makeReadOnly takes write permission off everything under dir (links
// aside); makeWritable gives it back so that dir can be removed.
func makeReadOnly(dir string) error { return chmodTree(dir, false) }

func makeWritable(dir string) error { return chmodTree(dir, true) }

func chmodTree(dir string, writable bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := info.Mode().Perm()
		if writable {
			mode |= 0o200
		} else {
			mode &^= 0o222
		}
		return os.Chmod(p, mode)
	})
}
