package ipaagent

import "testing"

// TestChecksumFor: a checksum file holds the checksum alone, or lines of
// "<checksum> <name>" (md5sum's text and binary forms) of which the
// image's is taken.
func TestChecksumFor(t *testing.T) {
	for _, tc := range []struct {
		name, text, file, want string
	}{
		{"checksum alone", "0123abcd\n", "a.img", "0123abcd"},
		{"md5sum lines", "1111  other.img\n2222  a.img\n", "a.img", "2222"},
		{"binary mode", "3333 *a.img\n", "a.img", "3333"},
		{"one line naming another file", "4444  other.img\n", "a.img", ""},
		{"empty", "\n", "a.img", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checksumFor(tc.text, tc.file); got != tc.want {
				t.Errorf("checksumFor(%q, %q) = %q, want %q", tc.text, tc.file, got, tc.want)
			}
		})
	}
}
