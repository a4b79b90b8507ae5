package redact

import (
	"regexp"
	"strings"
)

// Mask replaces what is hidden.
const Mask = "REDACTED"

// schemeRE matches a URL scheme and its "://".
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// URL returns s fit to print: see the package documentation for the rule.
func URL(s string) string {
	prefix, rest := "", s
	if m := schemeRE.FindString(s); m != "" {
		prefix, rest = m, s[len(m):]
	}
	scheme := strings.ToLower(strings.TrimSuffix(prefix, "://"))
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user, _, hasPass := strings.Cut(rest[:at], ":")
		keepUser := scheme == "" || scheme == "ssh" || strings.HasPrefix(scheme, "ssh+") || strings.HasSuffix(scheme, "+ssh")
		switch {
		case strings.ContainsAny(rest[:at], "?#"):
			// The '@' may belong to a query or fragment, or the password
			// may hold '?' or '#': nothing after the scheme can be told
			// apart, so none of it is shown.
			return prefix + Mask
		case strings.Contains(user, "@"):
			// Which '@' ends the user name cannot be told.
			prefix += Mask + "@"
		case hasPass && user == "":
			prefix += ":" + Mask + "@"
		case hasPass:
			prefix += user + ":" + Mask + "@"
		case keepUser && user != "":
			prefix += user + "@"
		default:
			prefix += Mask + "@"
		}
		rest = rest[at+1:]
	}
	return prefix + redactQuery(rest)
}

// redactQuery masks the query and the fragment of what follows the user
// information: a query item's name may be the secret itself (?TOKEN).
func redactQuery(rest string) string {
	var frag string
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, frag = rest[:i], "#"+Mask
	}
	base, query, ok := strings.Cut(rest, "?")
	if !ok || query == "" {
		return rest + frag
	}
	return base + "?" + Mask + frag
}

// urlInText finds URLs with a scheme, and scp-like addresses with user
// information, in free text: a run of characters that are neither space
// nor quotes nor brackets.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>` + "`" + `]+|[^\s"'<>()\[\]{}` + "`" + `]+@[^\s"'<>` + "`" + `]+`)

// Text returns s with every URL in it redacted (see URL): for messages
// that come from elsewhere, such as a library's error.
func Text(s string) string {
	return urlInText.ReplaceAllStringFunc(s, URL)
}

// Error returns err with its message redacted by Text; errors.Is and
// errors.As still see err. nil stays nil.
func Error(err error) error {
	if err == nil {
		return nil
	}
	return &redacted{msg: Text(err.Error()), err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }
