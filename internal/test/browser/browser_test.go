package browser

import (
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp/kb"
)

const testPage = `<!doctype html><html><head><title>t</title><script src="/app.js" defer></script></head>
<body><script>window.inline = 1;</script><input id="in"><button id="b" type="button">go</button><ul id="list"></ul></body></html>`

const testScript = `document.getElementById("b").addEventListener("click", () => {
  setTimeout(() => { for (let i = 0; i < 3; i++) document.getElementById("list").append(document.createElement("li")); }, 50);
});
document.getElementById("in").addEventListener("keydown", (e) => { if (e.key === "Enter") console.error("entered", e.target.value); });
window.__early = window.__init;
setTimeout(() => { throw new Error("boom"); }, 0);`

// TestBrowser drives a page under a Content-Security-Policy of 'self':
// waits, a click, keys, an init script, a screenshot, and the errors it
// reports (an exception, a console.error, a request answered 404, an
// inline script the policy refuses).
func TestBrowser(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(testPage)) })
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write([]byte(testScript))
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	b := Start(t)
	b.AddScript("window.__init = 42;")
	b.Navigate(srv.URL)
	b.WaitFor("#b")
	var early int
	b.Eval("window.__early", &early)
	if early != 42 {
		t.Errorf("the init script did not run before the page's: %d", early)
	}
	b.Click("#b")
	b.WaitCount("#list li", 3)
	if n := b.Count("li"); n != 3 {
		t.Errorf("Count(li) = %d", n)
	}
	if a := b.Attr("#b", "type"); a != "button" {
		t.Errorf("Attr = %q", a)
	}
	b.Eval(`document.getElementById("in").focus()`, nil)
	b.Press("abc" + kb.Enter)
	var status int
	b.Eval(`fetch("/nothing").then((r) => r.status)`, &status)
	if status != 404 {
		t.Errorf("fetch status %d", status)
	}
	b.WaitJS(`window.__seen = (window.__seen || 0) + 1, window.__seen > 2`, nil)
	errs := b.Errors()
	for _, want := range []string{"exception: Uncaught Error: boom", "console.error: entered abc", "network error: Failed to load resource: the server responded with a status of 404",
		"security error: Executing inline script violates the following Content Security Policy"} {
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, want) }) {
			t.Errorf("errors %q: want one with %q", errs, want)
		}
	}
	if len(errs) != 4 {
		t.Errorf("errors %q: want 4", errs)
	}
	b.ResetErrors()
	if errs := b.Errors(); len(errs) != 0 {
		t.Errorf("errors after ResetErrors: %q", errs)
	}
	p := b.Screenshot("page")
	if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
		t.Errorf("screenshot %s: %v", p, err)
	}
}
