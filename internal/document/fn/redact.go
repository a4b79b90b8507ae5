package fn

import (
	"errors"
	"regexp"
)

// privateKeyPEM matches a PEM private key block, whole or cut short, so
// that no error this package returns or prints can carry key material a
// template generated (text/template and YAML errors may quote their input).
var privateKeyPEM = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`)

// redact replaces private key blocks in s.
func redact(s string) string {
	return privateKeyPEM.ReplaceAllString(s, "[REDACTED PRIVATE KEY]")
}

// redactError returns err unchanged when its text holds no private key,
// else a new error with the keys removed; the chain is dropped on purpose,
// since any error in it could print the key.
func redactError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if r := redact(msg); r != msg {
		return errors.New(r)
	}
	return err
}
