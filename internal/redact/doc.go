// Package redact makes URLs and text that may hold URLs fit to print: the
// one place that decides what of a URL is a secret. Every message, log
// line, event, status or error that shows a URL passes it through URL (or
// text holding URLs through Text, an error through Error).
//
// The rule, applied to the text itself so that a URL that does not parse
// is redacted too:
//
//   - user information is everything between "scheme://" (or the start,
//     for scp-like addresses such as user:pass@host:path) and the LAST '@'
//     (a password may hold '/', '?', '#', ':' or '@'); its password, after
//     the first ':', becomes REDACTED and the user name stays (unless it
//     holds an '@' itself: then all of it is REDACTED); when a '?' or '#'
//     comes before that '@' (a password holding one, or an '@' in the
//     query), nothing can be told apart and all after the scheme is
//     REDACTED;
//   - a user name without a password becomes REDACTED too, since tokens
//     travel as user names (https://TOKEN@host), except for ssh:// and
//     scp-like addresses, where it is a login name (git@host:org/repo);
//   - a query becomes REDACTED as a whole (an item's name may be the
//     secret itself: ?TOKEN), and so does a fragment.
//
// Host, port and path are kept, so a message still says which repository,
// chart or BMC it is about. When an '@' belongs to the path, more than the
// user information is hidden: redaction errs on the side of hiding.
package redact
