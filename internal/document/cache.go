package document

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/airshipit/airship-go/internal/fileutil"
)

// Cache keeps built bundles keyed by the content of every file their build
// read. A later build of the same root whose files all still hash the same
// is answered from the cache; anything else builds again. It lives in
// memory (a plan renders each root once per run) and, when Dir is set, on
// disk too, so a re-render of an unchanged tree skips kustomize.
//
// Builds that ran the sops function are never cached, in memory or on
// disk: their output may hold decrypted secrets, and it depends on the
// keys in the environment, which no file hash sees. Every other build's
// output is the same whatever keys are set.
type Cache struct {
	// Dir holds one file per kustomize root; empty keeps the cache in memory only.
	Dir string
	// Salt is mixed into every key; set it to the program's version so a
	// new build never trusts an old one's output.
	Salt string

	mu      sync.Mutex
	entries map[string]*cacheEntry
	hits    int
	misses  int
}

type cacheEntry struct {
	Root    string            `json:"root"`
	Files   map[string]string `json:"files"`
	YAML    string            `json:"yaml"`
	Sources []string          `json:"sources"`
	bundle  *Bundle
}

// Stats returns the number of hits and misses so far.
func (c *Cache) Stats() (hits, misses int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

func (c *Cache) key(root string) string {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	sum := sha256.Sum256([]byte(c.Salt + "\x00" + abs))
	return hex.EncodeToString(sum[:])
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (c *Cache) get(fs filesys.FileSystem, root string) (*Bundle, bool) {
	key := c.key(root)
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e == nil && c.Dir != "" {
		e = c.load(key)
	}
	if e == nil || !e.fresh(fs) {
		c.mu.Lock()
		c.misses++
		c.mu.Unlock()
		return nil, false
	}
	b, err := e.materialize()
	if err != nil {
		return nil, false
	}
	c.mu.Lock()
	c.hits++
	if c.entries == nil {
		c.entries = map[string]*cacheEntry{}
	}
	c.entries[key] = e
	c.mu.Unlock()
	return b, true
}

func (e *cacheEntry) fresh(fs filesys.FileSystem) bool {
	for path, want := range e.Files {
		data, err := fs.ReadFile(path)
		if err != nil || hashBytes(data) != want {
			return false
		}
	}
	return true
}

// materialize returns a fresh copy of the cached bundle, so callers may
// change documents without changing the cache.
func (e *cacheEntry) materialize() (*Bundle, error) {
	if e.bundle == nil {
		nodes, err := kio.FromBytes([]byte(e.YAML))
		if err != nil {
			return nil, err
		}
		if len(nodes) != len(e.Sources) {
			return nil, fmt.Errorf("cache entry for %s is inconsistent", e.Root)
		}
		docs := make([]*Document, len(nodes))
		for i, n := range nodes {
			docs[i] = &Document{node: n, source: e.Sources[i]}
		}
		e.bundle = &Bundle{root: e.Root, docs: docs}
	}
	docs := make([]*Document, len(e.bundle.docs))
	for i, d := range e.bundle.docs {
		docs[i] = d.Copy()
	}
	return &Bundle{root: e.bundle.root, docs: docs}, nil
}

func (c *Cache) put(root string, reads map[string][]byte, b *Bundle) {
	files := make(map[string]string, len(reads))
	for p, data := range reads {
		files[p] = hashBytes(data)
	}
	sources := make([]string, len(b.docs))
	for i, d := range b.docs {
		sources[i] = d.source
	}
	e := &cacheEntry{Root: root, Files: files, Sources: sources}
	key := c.key(root)
	if c.Dir != "" {
		// The entry keeps the YAML it writes (a few bytes a document
		// against a copy of every node); a hit parses it once.
		data, err := b.YAML()
		if err != nil {
			return
		}
		e.YAML = string(data)
		c.store(key, e)
	} else {
		docs := make([]*Document, len(b.docs))
		for i, d := range b.docs {
			docs[i] = d.Copy()
		}
		e.bundle = &Bundle{root: root, docs: docs}
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*cacheEntry{}
	}
	c.entries[key] = e
	c.mu.Unlock()
}

// forget drops root's entry, in memory and on disk: its last build handled
// secrets (see Cache).
func (c *Cache) forget(root string) {
	key := c.key(root)
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
	if c.Dir != "" {
		_ = os.Remove(filepath.Join(c.Dir, key+".json"))
	}
}

func (c *Cache) load(key string) *cacheEntry {
	data, err := os.ReadFile(filepath.Join(c.Dir, key+".json"))
	if err != nil {
		return nil
	}
	var e cacheEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil
	}
	return &e
}

// store writes an entry; a cache that cannot be written is only slower.
func (c *Cache) store(key string, e *cacheEntry) {
	data, err := json.Marshal(e)
	if err != nil {
		return
	}
	_ = fileutil.WriteAtomic(filepath.Join(c.Dir, key+".json"), data, 0o600)
}
