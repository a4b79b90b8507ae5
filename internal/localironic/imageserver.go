package localironic

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/airshipit/airship-go/internal/httplimit"
)

// imageWriteTimeout bounds answering one image request: images are large,
// and a thousand hosts may fetch at once.
const imageWriteTimeout = time.Hour

// ImageHandler serves the regular files below root to GET and HEAD: no
// directory listing, no path with a ".." element, nothing outside root
// (symbolic links included).
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
	return &imageHandler{root: r}, nil
}

type imageHandler struct{ root *os.Root }

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
		http.Error(w, "not found", http.StatusNotFound)
		return
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
