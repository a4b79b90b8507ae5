package redact

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no credentials", "https://opendev.org/airship/treasuremap", "https://opendev.org/airship/treasuremap"},
		{"user and password", "https://user:password@example.com/org/repo.git", "https://user:REDACTED@example.com/org/repo.git"},
		{"password with special characters", "https://user:p/a:s%s@w:rd@example.com:8443/repo", "https://user:REDACTED@example.com:8443/repo"},
		{"password with ? and #", "https://user:p/a?s#s@w:rd@example.com:8443/repo", "https://REDACTED"},
		{"at sign in a query value", "redfish://h/x?password=hunt@er2", "redfish://REDACTED"},
		{"at sign in a fragment", "https://h/x#tok@en", "https://REDACTED"},
		{"percent-encoded password", "https://user:p%40ss@example.com/repo", "https://user:REDACTED@example.com/repo"},
		{"empty user, password", "https://:secret@example.com/repo", "https://:REDACTED@example.com/repo"},
		{"https user without password (a token)", "https://ghp_token123@example.com/org/repo", "https://REDACTED@example.com/org/repo"},
		{"ssh user without password", "ssh://git@example.com:2222/org/site.git", "ssh://git@example.com:2222/org/site.git"},
		{"ssh user and password", "ssh://user:pass@example.com/org/site.git", "ssh://user:REDACTED@example.com/org/site.git"},
		{"scp-like user", "git@example.com:org/site.git", "git@example.com:org/site.git"},
		{"scp-like user and password", "user:pass@example.com:org/site.git", "user:REDACTED@example.com:org/site.git"},
		{"a bare query item", "https://example.com/x?TOKEN=", "https://example.com/x?REDACTED"},
		{"query tokens", "https://example.com/chart.tgz?token=abc&sig=def;x", "https://example.com/chart.tgz?REDACTED"},
		{"empty query", "https://example.com/x?", "https://example.com/x?"},
		{"fragment", "https://example.com/x#access_token=abc", "https://example.com/x#REDACTED"},
		{"all of it", "https://u:p@example.com/x?k=v#f", "https://u:REDACTED@example.com/x?REDACTED#REDACTED"},
		{"unparseable with user:pass@", "%zz://user:pass@host/%%", "%zz:REDACTED@host/%%"},
		{"two at signs in the user information", "https://tok@en:pw@host/x", "https://REDACTED@host/x"},
		{"unparseable port", "https://user:pass@host:port/x", "https://user:REDACTED@host:port/x"},
		{"password that looks like a port and path", "https://user:123/abc@host/x", "https://user:REDACTED@host/x"},
		{"scheme case", "HTTPS://u:p@host", "HTTPS://u:REDACTED@host"},
		{"local path", "/srv/sites/my-site", "/srv/sites/my-site"},
		{"file URL", "file:///srv/site.git", "file:///srv/site.git"},
		{"at sign in the path hides more", "https://example.com/pkg@v1", "https://REDACTED@v1"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := URL(tt.in); got != tt.want {
				t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"URL in an error", `Get "https://user:s3cret@example.com/x/info/refs": EOF`, `Get "https://user:REDACTED@example.com/x/info/refs": EOF`},
		{"two URLs", "from https://a:b@h1/x to ssh://c:d@h2/y", "from https://a:REDACTED@h1/x to ssh://c:REDACTED@h2/y"},
		{"scp-like", "clone of user:pass@host:org/repo failed", "clone of user:REDACTED@host:org/repo failed"},
		{"bracketed", "remotes [https://u:p@h/r]", "remotes [https://u:REDACTED@h/r]"},
		{"an address is kept", "mail t@example.invalid", "mail t@example.invalid"},
		{"nothing to hide", "repository primary: no such file", "repository primary: no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Text(tt.in); got != tt.want {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestError(t *testing.T) {
	if Error(nil) != nil {
		t.Fatal("Error(nil) is not nil")
	}
	base := fmt.Errorf("fetching https://u:pw-value@h/r: %w", context.DeadlineExceeded)
	err := Error(base)
	if strings.Contains(err.Error(), "pw-value") || !strings.Contains(err.Error(), "u:REDACTED@h/r") {
		t.Errorf("Error() = %q", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is lost the cause: %v", err)
	}
}

// FuzzURL checks that a password never survives redaction, whatever
// surrounds it, and that URL and Text never panic.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"https://u:p@h/x?y=z#f", "user:pass@host:path", "ssh://git@h/x", "%zz://a:b@c", "a@b@c", "?#@:", ""} {
		f.Add(s, "s3cretPW")
	}
	f.Fuzz(func(t *testing.T, s, password string) {
		_ = Text(s)
		got := URL(s)
		if !strings.Contains(s, "@") && !strings.ContainsAny(s, "?#") && got != s {
			t.Fatalf("URL(%q) = %q changed a string with nothing to hide", s, got)
		}
		if len(password) < 6 || strings.ContainsAny(password, "@/?#:&;=") || strings.Contains(Mask, password) {
			return
		}
		// The fixed text around the password must not hold its tail.
		if strings.Contains("https://user:ssh://host/x?token=ab@#"+Mask, password[2:]) {
			return
		}
		if strings.Contains(s, password[2:]) || strings.Contains(Mask, password[2:]) {
			return
		}
		for _, u := range []string{
			"https://user:" + password + "@" + s,
			"ssh://user:" + password + "@" + s,
			"user:" + password + "@" + s,
			"https://" + password + "@" + s,
			"https://host/" + s + "?token=" + password,
			"https://host/x?token=ab@" + password,
			"https://host/x#ab@" + password,
			"user:" + password[:2] + "?" + password[2:] + "@" + s,
		} {
			if strings.Contains(s, password) {
				return
			}
			if out := URL(u); strings.Contains(out, password[2:]) {
				t.Fatalf("URL(%q) = %q shows the password", u, out)
			}
		}
	})
}
