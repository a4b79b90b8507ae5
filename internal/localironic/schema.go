package localironic

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// dbsyncTimeout bounds one ironic-dbsync run.
const dbsyncTimeout = 5 * time.Minute

var versionRE = regexp.MustCompile(`^[0-9][0-9A-Za-z.+~-]*$`)

// IronicVersion returns the version ironic-dbsync reports, e.g. 21.4.4.
func IronicVersion(ctx context.Context, dbsync string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, dbsync, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w: %s", dbsync, err, strings.TrimSpace(string(out)))
	}
	v := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(v, '\n'); i >= 0 {
		v = strings.TrimSpace(v[i+1:])
	}
	if !versionRE.MatchString(v) {
		return "", fmt.Errorf("%s --version printed %q, not a version", dbsync, v)
	}
	return v, nil
}

// schemaCacheFile is the pristine schema of one Ironic version.
func schemaCacheFile(dir, version string) string {
	return filepath.Join(dir, "ironic-schema-"+version+".sqlite")
}

// defaultSchemaCacheDir is os.UserCacheDir()/airship.
func defaultSchemaCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache directory for Ironic's schema: %w", err)
	}
	return filepath.Join(d, "airship"), nil
}

// ensureDatabase gives the state directory a database: it keeps one that
// exists (a restarted Ironic keeps its nodes), else copies the cached
// pristine schema of this Ironic version, creating it first if needed.
func ensureDatabase(ctx context.Context, o Options, p paths) error {
	if _, err := os.Stat(p.database()); err == nil {
		return nil
	}
	dir := o.SchemaCacheDir
	if dir == "" {
		var err error
		if dir, err = defaultSchemaCacheDir(); err != nil {
			return err
		}
	}
	version, err := IronicVersion(ctx, o.DBSyncBinary)
	if err != nil {
		return err
	}
	cached := schemaCacheFile(dir, version)
	if _, err := os.Stat(cached); err != nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			// No cache (a read-only home): the schema goes straight to the state directory.
			progressf(o.Progress, "no schema cache (%v): creating Ironic's schema in %s", err, p.database())
			return createSchema(ctx, o.DBSyncBinary, p.database(), p.tmp())
		}
		progressf(o.Progress, "creating Ironic %s's database schema (once per version) in %s", version, cached)
		if err := createSchema(ctx, o.DBSyncBinary, cached, p.tmp()); err != nil {
			return err
		}
	}
	return copyFile(cached, p.database(), 0o600)
}

// createSchema runs ironic-dbsync create_schema into a temporary file
// beside dest and renames it to dest, so a reader never sees half a schema.
func createSchema(ctx context.Context, dbsync, dest, tmpDir string) error {
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".ironic-schema-*.sqlite")
	if err != nil {
		return fmt.Errorf("creating Ironic schema: %w", err)
	}
	tmpDB := tmp.Name()
	_ = tmp.Close() // empty: sqlite fills it
	defer func() { _ = os.Remove(tmpDB) }()
	conf, err := os.CreateTemp(tmpDir, "dbsync-*.conf")
	if err != nil {
		return fmt.Errorf("creating Ironic schema: %w", err)
	}
	defer func() { _ = os.Remove(conf.Name()) }()
	_, werr := fmt.Fprintf(conf, "[database]\nconnection = sqlite:///%s\n", tmpDB)
	if cerr := conf.Close(); werr != nil || cerr != nil {
		return fmt.Errorf("writing %s: %w", conf.Name(), firstErr(werr, cerr))
	}
	ctx, cancel := context.WithTimeout(ctx, dbsyncTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, dbsync, "--config-file", conf.Name(), "create_schema").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s create_schema: %w: %s", dbsync, err, lastLines(string(out), 15))
	}
	if err := os.Chmod(tmpDB, 0o600); err != nil {
		return fmt.Errorf("storing Ironic schema %s: %w", dest, err)
	}
	if err := os.Rename(tmpDB, dest); err != nil {
		return fmt.Errorf("storing Ironic schema %s: %w", dest, err)
	}
	return nil
}

func copyFile(src, dest string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copying %s: %w", src, err)
	}
	defer func() { _ = in.Close() }() // read only
	tmp := dest + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return fmt.Errorf("copying %s to %s: %w", src, dest, err)
	}
	_, cerr := io.Copy(out, in)
	if err := firstErr(cerr, out.Sync(), out.Close()); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("copying %s to %s: %w", src, dest, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("copying %s to %s: %w", src, dest, err)
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// walScript switches an sqlite database to write-ahead logging and prints
// the journal mode it has then. The mode is kept in the file, so Ironic's
// own connections use it too.
const walScript = "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], timeout=30)\nprint(c.execute('PRAGMA journal_mode=WAL').fetchone()[0])\nc.close()\n"

// enableWAL puts Ironic's database in WAL mode before Ironic opens it.
// Ironic 21.4 leaves sqlite in its default rollback journal, where a
// reader's open transaction blocks every writer's commit: in the one
// all-in-one process (eventlet, whose green threads sqlite's busy wait
// blocks) two hosts enrolled at once could end in "database is locked"
// and a node left in verifying. With WAL readers never block the writer.
// It runs the Python that runs Ironic (Debian's), which has sqlite3.
func enableWAL(ctx context.Context, db string) error {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		python = "python3"
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", walScript, db).CombinedOutput()
	if err != nil {
		return fmt.Errorf("switching Ironic's database %s to WAL: %w: %s", db, err, lastLines(string(out), 5))
	}
	if mode := strings.TrimSpace(string(out)); mode != "wal" {
		return fmt.Errorf("switching Ironic's database %s to WAL: sqlite kept journal mode %q", db, mode)
	}
	return nil
}
