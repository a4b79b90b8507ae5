package hostops_test

import (
	"strings"
	"testing"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/hostops"
)

// TestTargetRedactsISOURL: the state a remote-direct waits for, which is
// reported and put in errors, shows the ISO's URL without its secrets.
func TestTargetRedactsISOURL(t *testing.T) {
	tests := []struct {
		url, secret, want string
	}{
		{"https://user:Iso-pw-51@images.example/node.iso", "Iso-pw-51", "power On with https://user:REDACTED@images.example/node.iso inserted"},
		{"https://images.example/node.iso?token=Iso-tok-62", "Iso-tok-62", "power On with https://images.example/node.iso?REDACTED inserted"},
		{"http://images.example/node.iso", "", "power On with http://images.example/node.iso inserted"},
	}
	for _, tt := range tests {
		got := hostops.Request{Operation: v1.BaremetalOperationRemoteDirect, ISOURL: tt.url}.Target()
		if got != tt.want || (tt.secret != "" && strings.Contains(got, tt.secret)) {
			t.Errorf("Target() = %q, want %q", got, tt.want)
		}
	}
}
