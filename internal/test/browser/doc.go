// Package browser drives a real headless Chromium from a test, with
// chromedp, for tests of web pages: the dashboard's tests and the
// end-to-end test of a demo site.
//
// Start finds Chromium ($AIRSHIP_CHROMIUM, /usr/bin/chromium, or chromium
// or chromium-browser on PATH) and starts it with a new profile and flags
// that keep it off the network but for the pages it is sent to: no
// background networking, no proxy, no QUIC. A missing Chromium skips the
// test, or fails it when testtool.RequireEnv is set. The browser ends
// when the test does, before the test's cleanups run, so a server the
// page keeps an event stream open to can close.
//
// Every wait is bounded by the browser's timeout (30 seconds unless
// WithTimeout says otherwise); nothing sleeps for a fixed time. A
// condition is a JavaScript expression, checked in the page at every
// animation frame (compiled with the wait, so a Content-Security-Policy
// without 'unsafe-eval' does not refuse it). A wait or action that fails
// ends the test with the page's address, and a screenshot of the page
// when $AIRSHIP_TEST_ARTIFACTS is set.
//
// The browser records every error the page reports: uncaught exceptions
// and promise rejections, console.error and console.assert calls, and the
// browser log's errors (a failed request, a Content-Security-Policy
// violation). Errors lists them, so a test can assert there were none;
// a test that provokes one on purpose checks it and calls ResetErrors.
//
// Screenshot writes a full-page PNG into $AIRSHIP_TEST_ARTIFACTS/<test>/
// when that variable is set (CI keeps the directory), else into the
// test's temporary directory, and logs its path.
package browser
