package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/airshipit/airship-go/internal/phase"
)

//go:embed web
var webFS embed.FS

// Options configure the dashboard's handler.
type Options struct {
	// Site is the loaded site; its ClusterMap names the clusters watched.
	Site *phase.Site
	// Context is the airship config context shown in the header.
	Context string
	// AllowActions enables the POST actions (runs, host power); without it
	// they answer 403 and are audited as refused.
	AllowActions bool
	// Token, when set, is required on every request but GET /login and the
	// assets: as "Authorization: Bearer <token>", or through the session
	// cookie POST /login sets.
	Token string
	// AuditLog is the file actions are appended to (JSON lines, 0600).
	AuditLog string
	// RunLog is the file phase and plan runs are appended to (JSON lines, 0600).
	RunLog string
	// PKIDir is where the site's PKI is kept (promenade's certificates.yaml);
	// "" shows the catalog without expiry.
	PKIDir string
	// PKIConfigDir holds the site's Promenade documents (the PKICatalog).
	PKIConfigDir string
	// Version is shown in /api/info.
	Version string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Watch is how clusters are watched (default: every cluster of the
	// ClusterMap, through the site's kubeconfigs).
	Watch WatchOptions
}

// Server is the dashboard's HTTP handler and the state behind it.
type Server struct {
	opts    Options
	mux     *http.ServeMux
	hub     *hub
	live    *live
	phases  *phaseStates
	runs    *runs
	audit   *auditLog
	session string
	assets  fs.FS
	// ctx is Start's: runs started here end with it.
	ctx context.Context
}

// New returns the handler; Start begins watching.
func New(opts Options) (*Server, error) {
	if opts.Site == nil {
		return nil, errors.New("dashboard: no site")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	assets, err := fs.Sub(webFS, "web")
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, mux: http.NewServeMux(), hub: newHub(), assets: assets, ctx: context.Background()}
	if opts.Token != "" {
		s.session = sessionValue(opts.Token)
	}
	if s.audit, err = openAuditLog(opts.AuditLog); err != nil {
		return nil, err
	}
	if s.runs, err = newRuns(opts.RunLog, s.hub, opts.Now); err != nil {
		return nil, err
	}
	s.live = newLive(opts.Site, opts.Watch, s.hub, opts.Now)
	s.phases = newPhaseStates(opts.Site, s.runs, s.hub)
	s.routes()
	return s, nil
}

// Start watches the clusters and reads the phases' states until ctx
// ends; runs started through the dashboard are cancelled with it.
func (s *Server) Start(ctx context.Context) {
	s.ctx = ctx
	s.live.onReachable = s.phases.refresh
	s.live.start(ctx)
	s.phases.start(ctx)
}

// sessionValue is the session cookie's value for a token: derived from it,
// so the cookie never holds the token itself.
func sessionValue(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("airship-dashboard-session"))
	return hex.EncodeToString(m.Sum(nil))
}

const sessionCookie = "airship_dashboard_session"

// pagePaths are the front end's pages: each answers index.html.
var pagePaths = []string{"/{$}", "/overview", "/plans/{name}", "/phases/{name}", "/hosts", "/clusters", "/charts", "/certificates", "/audit"}

func (s *Server) routes() {
	for _, p := range pagePaths {
		s.mux.HandleFunc("GET "+p, s.auth(s.page))
	}
	s.mux.HandleFunc("GET /assets/{file}", s.asset)
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	s.mux.HandleFunc("GET /login", s.loginPage)
	s.mux.HandleFunc("POST /login", s.login)
	s.mux.HandleFunc("GET /api/info", s.auth(s.info))
	s.mux.HandleFunc("GET /api/overview", s.auth(s.overview))
	s.mux.HandleFunc("GET /api/plans", s.auth(s.plans))
	s.mux.HandleFunc("GET /api/plans/{name}", s.auth(s.plan))
	s.mux.HandleFunc("GET /api/phases/{name}", s.auth(s.phase))
	s.mux.HandleFunc("GET /api/hosts", s.auth(s.hosts))
	s.mux.HandleFunc("GET /api/clusters", s.auth(s.clusters))
	s.mux.HandleFunc("GET /api/charts", s.auth(s.charts))
	s.mux.HandleFunc("GET /api/certificates", s.auth(s.certificates))
	s.mux.HandleFunc("GET /api/runs", s.auth(s.runList))
	s.mux.HandleFunc("GET /api/runs/{id}", s.auth(s.runGet))
	s.mux.HandleFunc("GET /api/audit", s.auth(s.auditList))
	s.mux.HandleFunc("GET /api/events", s.auth(s.events))
	s.mux.HandleFunc("POST /api/plans/{name}/run", s.auth(s.action(s.runPlan)))
	s.mux.HandleFunc("POST /api/phases/{name}/run", s.auth(s.action(s.runPhase)))
	s.mux.HandleFunc("POST /api/hosts/{cluster}/{namespace}/{name}/{action}", s.auth(s.action(s.hostAction)))
}

// ServeHTTP checks the Host header (a page on another site that rebinds
// its name to this address gets nothing), sets the security headers and
// routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hostAllowed(r.Host) {
		writeError(w, http.StatusMisdirectedRequest, fmt.Errorf("host %q is not this dashboard's address", r.Host))
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	s.mux.ServeHTTP(w, r)
}

// hostAllowed accepts IP addresses and localhost; with a token, any name
// (the token, not the name, is what admits a client then).
func (s *Server) hostAllowed(hostport string) bool {
	if s.opts.Token != "" {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	return host == "localhost" || net.ParseIP(host) != nil
}

// auth admits a request with the bearer token or the session cookie when
// a token is set; pages without either are sent to /login.
func (s *Server) auth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Token == "" || s.authorized(r) {
			next(w, r)
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="airship-dashboard"`)
		writeError(w, http.StatusUnauthorized, errors.New("missing or wrong bearer token"))
	}
}

func (s *Server) authorized(r *http.Request) bool {
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		return subtle.ConstantTimeCompare([]byte(strings.TrimPrefix(a, "Bearer ")), []byte(s.opts.Token)) == 1
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		return subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.session)) == 1
	}
	return false
}

// user names who made a request, for the audit log: "token" when the
// token admitted it, else "local" (a loopback listener without a token).
func (s *Server) user(r *http.Request) string {
	if s.opts.Token != "" {
		return "token"
	}
	return "local"
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	b, err := fs.ReadFile(s.assets, "index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}

var assetTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
}

func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	ext := name[strings.LastIndexByte(name, '.')+1:]
	typ, ok := assetTypes["."+ext]
	if !ok || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(s.assets, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", typ)
	_, _ = w.Write(b)
}

const loginHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Airship dashboard: sign in</title>
<link rel="stylesheet" href="/assets/app.css"></head>
<body><main id="main" class="login"><h1>Airship dashboard</h1>
<form method="post" action="/login"><label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" autofocus required>
<input type="hidden" name="next" value="%s">
<button type="submit">Sign in</button></form>%s</main></body></html>`

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.writeLogin(w, r.URL.Query().Get("next"), "")
}

func (s *Server) writeLogin(w http.ResponseWriter, next, msg string) {
	if msg != "" {
		msg = `<p class="error" role="alert">` + htmlEscape(msg) + `</p>`
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, loginHTML, htmlEscape(safeNext(next)), msg)
}

// login exchanges the token for a session cookie (HttpOnly, SameSite
// Strict, Secure over TLS) and goes back to the page asked for.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	if s.opts.Token == "" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("token")), []byte(s.opts.Token)) != 1 {
		w.WriteHeader(http.StatusUnauthorized)
		s.writeLogin(w, next, "wrong token")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.session, Path: "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// safeNext keeps a redirect on this server: a path, never another origin.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) {
		return "/"
	}
	return next
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")
	return r.Replace(s)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, APIError{Error: err.Error()})
}

// action guards a POST action: the request must come from this origin
// (Origin or Sec-Fetch-Site say so) with a JSON body of at most 64 KiB,
// and actions must be allowed; a refusal is audited.
func (s *Server) action(next func(w http.ResponseWriter, r *http.Request, body []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			writeError(w, http.StatusUnsupportedMediaType, errors.New("actions take Content-Type: application/json"))
			return
		}
		if !sameOrigin(r) {
			writeError(w, http.StatusForbidden, errors.New("cross-origin action refused"))
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		if err != nil {
			writeError(w, http.StatusRequestEntityTooLarge, err)
			return
		}
		if !s.opts.AllowActions {
			s.record(r, actionName(r), actionTarget(r), "refused", "actions are off: start the dashboard with --allow-actions")
			writeError(w, http.StatusForbidden, errors.New("actions are off: start the dashboard with --allow-actions"))
			return
		}
		next(w, r, body)
	}
}

// sameOrigin accepts requests whose Origin is this server, or that carry
// no Origin but a Sec-Fetch-Site of same-origin or none (a tool, not a
// page of another site).
func sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		return err == nil && u.Host == r.Host
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// newID returns a random run ID.
func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
