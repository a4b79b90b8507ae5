package testtool

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"testing"
)

// GitHTTPHandler serves the repositories below root over git's smart HTTP
// protocol, through `git http-backend` (the git tool is required as Path
// requires it). With a user, requests must carry that user and password
// as Basic auth, and others get 401 as a git server answers them.
func GitHTTPHandler(t testing.TB, root, user, password string) http.Handler {
	t.Helper()
	backend := &cgi.Handler{Path: Path(t, "git"), Args: []string{"http-backend"}, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	if user == "" {
		return backend
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	})
}

// GitHTTPServer is GitHTTPHandler on a loopback port until the test ends.
func GitHTTPServer(t testing.TB, root, user, password string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(GitHTTPHandler(t, root, user, password))
	t.Cleanup(srv.Close)
	return srv
}
