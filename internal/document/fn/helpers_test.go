package fn

import (
	"encoding/base64"
	"regexp"
)

func decodeB64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

func regexpMustMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
