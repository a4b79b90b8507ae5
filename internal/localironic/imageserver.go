package localironic

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airshipit/airship-go/internal/httplimit"
)

// imageWriteTimeout bounds answering one image request: images are large,
// and a thousand hosts may fetch at once.
const imageWriteTimeout = time.Hour

// ImageHandler serves the regular files below root to GET and HEAD: no
// directory listing, no path with a ".." element, nothing outside root,
// with one exception: a symbolic link whose target resolves into Ironic's
// per-node images directory (LinkedImagesDir of the state directory root
// belongs to). That is how Ironic publishes an image it converted
// ([agent] image_download_source = local): <http_root>/agent_images/<node>
// is an absolute link to [pxe] images_path/<node>/disk.
func ImageHandler(root string) (http.Handler, error) {
	h, err := newImageHandler(root)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// newImageHandler is ImageHandler's concrete type, for StartImageServer to close.
func newImageHandler(root string) (*imageHandler, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("image server root: %w", err)
	}
	links := LinkedImagesDir(root)
	if resolved, err := filepath.EvalSymlinks(links); err == nil {
		links = resolved
	}
	return &imageHandler{root: r, links: links}, nil
}

// LinkedImagesDir is where Ironic keeps the per-node images that links in
// the image server's root (the state directory's http/) may point to: the
// state directory's cache/images ([pxe] images_path).
func LinkedImagesDir(httpRoot string) string {
	return filepath.Join(filepath.Dir(httpRoot), "cache", "images")
}

type imageHandler struct {
	root *os.Root
	// links is LinkedImagesDir, symbolic links resolved.
	links string
}

// openLink opens name when it is a symbolic link into h.links.
func (h *imageHandler) openLink(name string) (*os.File, error) {
	target, err := h.root.Readlink(name)
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(target) {
		return nil, fs.ErrNotExist
	}
	resolved, err := filepath.EvalSymlinks(target)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(h.links, resolved)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fs.ErrNotExist
	}
	return os.Open(resolved) //nolint:gosec // resolved lies below Ironic's images directory (checked above)
}

func (h *imageHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name, ok := cleanImagePath(r.URL.Path)
	if !ok {
		http.Error(w, "bad path", http.StatusBadRequest)
		return
	}
	f, err := h.root.Open(name)
	if err != nil {
		if f, err = h.openLink(name); err != nil {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
	}
	defer func() { _ = f.Close() }() // read only
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	http.ServeContent(w, r, fi.Name(), fi.ModTime(), f)
}

// cleanImagePath turns a URL path into a name below the root: no empty
// name, no "..", no NUL, no backslash.
func cleanImagePath(urlPath string) (string, bool) {
	name := strings.TrimPrefix(urlPath, "/")
	if name == "" || strings.ContainsAny(name, "\x00\\") {
		return "", false
	}
	for _, elem := range strings.Split(name, "/") {
		if elem == ".." {
			return "", false
		}
	}
	if !fs.ValidPath(strings.TrimSuffix(name, "/")) {
		return "", false
	}
	return name, true
}

// ImageServer is a running image server.
type ImageServer struct {
	srv  *http.Server
	h    *imageHandler
	addr string
	done chan error
}

// Addr is the server's address, host:port.
func (s *ImageServer) Addr() string { return s.addr }

// Shutdown stops the server, waiting for requests under way until ctx ends.
func (s *ImageServer) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = errors.Join(err, s.srv.Close())
	}
	serveErr := <-s.done
	return errors.Join(err, serveErr, s.h.root.Close())
}

// listenConfig binds every listener of this package.
var listenConfig net.ListenConfig

// StartImageServer serves root on addr (host:port) in this process, with
// httplimit's server timeouts, until Shutdown; ctx bounds only the bind.
func StartImageServer(ctx context.Context, root, addr string) (*ImageServer, error) {
	h, err := newImageHandler(root)
	if err != nil {
		return nil, err
	}
	ln, err := listenConfig.Listen(ctx, "tcp", addr)
	if err != nil {
		_ = h.root.Close() // read only
		return nil, fmt.Errorf("image server: %w", err)
	}
	srv := httplimit.NewServer(h, httplimit.ServerTimeouts{Write: imageWriteTimeout})
	s := &ImageServer{srv: srv, h: h, addr: ln.Addr().String(), done: make(chan error, 1)}
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// ServeImages serves root on addr until ctx ends: the body of the
// background image server (airshipctl ironic serve-http).
func ServeImages(ctx context.Context, root, addr string) error {
	s, err := StartImageServer(ctx, root, addr)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case err := <-s.done:
		return fmt.Errorf("image server on %s: %w", addr, err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return s.Shutdown(shutdownCtx)
}
