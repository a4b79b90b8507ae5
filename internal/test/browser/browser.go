package browser

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/airshipit/airship-go/internal/test/testtool"
)

// ChromiumEnv names the Chromium binary to use instead of the one found.
const ChromiumEnv = "AIRSHIP_CHROMIUM"

// ArtifactsEnv names the directory screenshots are kept in, per test.
const ArtifactsEnv = "AIRSHIP_TEST_ARTIFACTS"

// startTimeout bounds Chromium's start, whatever the timeout of waits.
const startTimeout = time.Minute

// Browser is a Chromium with one tab, for one test.
type Browser struct {
	t       testing.TB
	ctx     context.Context
	timeout time.Duration
	mu      sync.Mutex
	errs    []string
	dir     string
}

// Option configures Start.
type Option func(*Browser)

// WithTimeout bounds every wait and action (default 30 seconds): a test
// of a slow page raises it.
func WithTimeout(d time.Duration) Option { return func(b *Browser) { b.timeout = d } }

// Find returns the path of Chromium: $AIRSHIP_CHROMIUM when set, else
// /usr/bin/chromium, chromium or chromium-browser on PATH; "" when it is
// not there.
func Find() string {
	names := []string{"/usr/bin/chromium", "chromium", "chromium-browser"}
	if p := os.Getenv(ChromiumEnv); p != "" {
		names = []string{p}
	}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Start starts Chromium (1400x900) for the test and opens a blank tab.
func Start(t testing.TB, opts ...Option) *Browser {
	t.Helper()
	path := Find()
	if path == "" {
		testtool.Missing(t, "Chromium not found (%s=%q, else /usr/bin/chromium, chromium or chromium-browser on PATH): install the Debian package chromium (apt-get install -y chromium); %s",
			ChromiumEnv, os.Getenv(ChromiumEnv), testtool.SetupHint)
	}
	b := &Browser{t: t, timeout: 30 * time.Second}
	for _, o := range opts {
		o(b)
	}
	var env []string // Chromium must reach the test's servers directly.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasSuffix(strings.ToLower(k), "_proxy") {
			env = append(env, kv)
		}
	}
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "chromium.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	aopts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-proxy-server", true), chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(1400, 900), chromedp.NoInheritEnv, chromedp.Env(env...), chromedp.CombinedOutput(out))
	// The browser's contexts end with the test's, before the cleanups.
	actx, acancel := chromedp.NewExecAllocator(t.Context(), aopts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	t.Cleanup(func() { cancel(); acancel() })
	b.ctx = ctx
	timer := time.AfterFunc(startTimeout, cancel)
	err = chromedp.Do(ctx)
	if !timer.Stop() || err != nil {
		log, _ := os.ReadFile(out.Name())
		t.Fatalf("starting %s within %s: %v; its output:\n%s", path, startTimeout, err, log)
	}
	return b
}

// Context is the tab's context, for chromedp actions of one's own.
func (b *Browser) Context() context.Context { return b.ctx }

// do runs chromedp steps within the timeout, or fails the test.
func (b *Browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		if ctx.Err() != nil && b.ctx.Err() == nil {
			err = fmt.Errorf("not done within %s: %w", b.timeout, err)
		}
		b.fail("%s: %w", what, err)
	}
}

// fail ends the test with the page's address and, when screenshots are
// kept ($AIRSHIP_TEST_ARTIFACTS), a screenshot of it.
func (b *Browser) fail(format string, args ...any) {
	b.t.Helper()
	err := fmt.Errorf(format, args...)
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if loc, lerr := chromedp.Run(ctx, chromedp.Location()); lerr == nil {
		err = fmt.Errorf("%w; on %s", err, loc)
	}
	if os.Getenv(ArtifactsEnv) == "" {
		b.t.Fatalf("%v (set $%s to keep a screenshot of the page)", err, ArtifactsEnv)
	}
	if png, serr := chromedp.Run(ctx, chromedp.CaptureScreenshot()); serr == nil {
		err = fmt.Errorf("%w, which looked like %s", err, b.write("failure", png))
	}
	b.t.Fatal(err)
}

// Navigate loads url and waits for its load event.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	b.do("navigating to "+url, chromedp.Navigate(url))
}

// Eval evaluates a JavaScript expression, awaiting a promise, and decodes
// its JSON value into out (nil: the value is dropped).
func (b *Browser) Eval(expr string, out any) {
	b.t.Helper()
	b.eval("evaluating "+expr, expr, out)
}

func (b *Browser) eval(what, js string, out any) {
	b.t.Helper()
	b.do(what, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		raw, err := chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise)(ctx, t)
		if err == nil && out != nil {
			err = json.Unmarshal(raw, out)
		}
		return err
	}))
}

// WaitJS waits until the expression is truthy in the page, checked at
// every animation frame, and decodes its value into out (may be nil).
// The expression is compiled with the wait: no eval() the page's
// Content-Security-Policy would refuse.
func (b *Browser) WaitJS(expr string, out any) {
	b.t.Helper()
	ms := b.timeout.Milliseconds()
	js := `new Promise((resolve, reject) => { const end = performance.now() + ` + fmt.Sprint(ms) + `;
		const check = () => { let v; try { v = (` + expr + `); } catch (e) { reject(e); return; }
			if (v) resolve(v); else if (performance.now() > end) reject(new Error("still false after ` + fmt.Sprint(ms) + ` ms"));
			else requestAnimationFrame(check); };
		check(); })`
	b.eval("waiting for "+expr, js, out)
}

// WaitFor waits until an element matches the CSS selector.
func (b *Browser) WaitFor(sel string) {
	b.t.Helper()
	b.WaitJS("document.querySelector("+quote(sel)+")", nil)
}

// WaitCount waits until exactly n elements match the CSS selector.
func (b *Browser) WaitCount(sel string, n int) {
	b.t.Helper()
	b.WaitJS(fmt.Sprintf("document.querySelectorAll(%s).length === %d", quote(sel), n), nil)
}

// Count is how many elements match the CSS selector now.
func (b *Browser) Count(sel string) int {
	b.t.Helper()
	var n int
	b.Eval("document.querySelectorAll("+quote(sel)+").length", &n)
	return n
}

// Attr is the attribute of the first element that matches the selector;
// the test fails when none does or it lacks the attribute.
func (b *Browser) Attr(sel, name string) string {
	b.t.Helper()
	var v *string
	b.Eval(fmt.Sprintf("document.querySelector(%s)?.getAttribute(%s) ?? null", quote(sel), quote(name)), &v)
	if v == nil {
		b.fail("no element %s with attribute %s", sel, name)
	}
	return *v
}

// Click waits until the first element that matches the selector can take
// a click (laid out, and on top at its centre once scrolled into view),
// then clicks its centre with the mouse.
func (b *Browser) Click(sel string) {
	b.t.Helper()
	var at struct{ X, Y float64 }
	b.WaitJS(`(() => { const e = document.querySelector(`+quote(sel)+`); if (!e) return null;
		e.scrollIntoView({block: "center", inline: "center"}); const r = e.getBoundingClientRect();
		const x = r.left + r.width / 2, y = r.top + r.height / 2, hit = document.elementFromPoint(x, y);
		return r.width && r.height && hit && (hit === e || e.contains(hit)) ? {X: x, Y: y} : null; })()`, &at)
	b.do("clicking "+sel, chromedp.MouseClickXY(at.X, at.Y))
}

// Press types keys into the focused element; use the constants of
// github.com/chromedp/chromedp/kb for keys such as Tab and Enter.
func (b *Browser) Press(keys string) {
	b.t.Helper()
	b.do(fmt.Sprintf("pressing %q", keys), chromedp.KeyEvent(keys))
}

// AddScript runs js in every document the tab loads from now on, before
// the page's own scripts.
func (b *Browser) AddScript(js string) {
	b.t.Helper()
	b.do("adding a script", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: js})
		return err
	}))
}

// Screenshot saves the whole page as <name>.png and returns its path.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	var png []byte
	b.do("taking screenshot "+name, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		m, err := cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return err
		}
		clip := page.Viewport{Width: math.Ceil(m.CSSContentSize.Width), Height: math.Ceil(m.CSSContentSize.Height), Scale: 1}
		yes := true
		r, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, Clip: &clip, CaptureBeyondViewport: &yes, FromSurface: &yes})
		png = r.Data
		return err
	}))
	p := b.write(name, png)
	b.t.Logf("screenshot %s: %s", name, p)
	return p
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func (b *Browser) write(name string, png []byte) string {
	if b.dir == "" {
		if root := os.Getenv(ArtifactsEnv); root != "" {
			b.dir = filepath.Join(root, unsafeName.ReplaceAllString(b.t.Name(), "_"))
		} else {
			b.dir = b.t.TempDir()
		}
	}
	p := filepath.Join(b.dir, unsafeName.ReplaceAllString(name, "_")+".png")
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return err.Error()
	}
	if err := os.WriteFile(p, png, 0o644); err != nil {
		return err.Error()
	}
	return p
}

// Errors lists the errors the pages reported so far: every event the
// browser sent before this call is in it (the tab handles events in
// order, and those before the answer to a command before it).
func (b *Browser) Errors() []string {
	b.t.Helper()
	b.Eval("0", nil)
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errs...)
}

// ResetErrors forgets the errors reported so far.
func (b *Browser) ResetErrors() {
	b.t.Helper()
	n := len(b.Errors())
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errs = b.errs[n:]
}

// listen runs in the tab's event loop: it only records.
func (b *Browser) listen(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg = "exception: " + d.Text
		if d.Exception != nil {
			desc, _, _ := strings.Cut(d.Exception.Description, "\n")
			msg += " " + desc
		}
		msg += where(d.URL, d.LineNumber)
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		var args []string
		for _, a := range ev.Args {
			var s string
			if a.Type != runtime.RemoteObjectTypeString || json.Unmarshal(a.Value, &s) != nil {
				s = cmp.Or(a.Description, string(a.Value))
			}
			args = append(args, s)
		}
		msg = "console." + string(ev.Type) + ": " + strings.Join(args, " ")
	case *log.EventEntryAdded:
		if ev.Entry.Level != log.EntryLevelError {
			return
		}
		msg = fmt.Sprintf("%s error: %s%s", ev.Entry.Source, ev.Entry.Text, where(ev.Entry.URL, ev.Entry.LineNumber))
	default:
		return
	}
	b.mu.Lock()
	b.errs = append(b.errs, msg)
	b.mu.Unlock()
}

func where(url string, line int64) string {
	if url == "" {
		return ""
	}
	return fmt.Sprintf(" (%s:%d)", url, line+1)
}

// quote makes s a JavaScript string literal.
func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
