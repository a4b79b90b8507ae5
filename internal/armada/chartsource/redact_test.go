package chartsource

import (
	"context"
	"strings"
	"testing"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// TestLoadRedactsUnparseableURLs: a tar location that does not parse as a
// URL is read as a file, and the error still hides its credentials.
func TestLoadRedactsUnparseableURLs(t *testing.T) {
	tests := []struct {
		name, location, secret string
	}{
		{"bad escape in the password", "https://user:s3cr%zzpw@127.0.0.1:1/c.tgz", "s3cr%zzpw"},
		{"bad port", "https://user:p4ssw0rd@127.0.0.1:port/c.tgz", "p4ssw0rd"},
		{"scp-like", "user:pa55word@host:charts/c.tgz", "pa55word"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Loader{}.Load(context.Background(), armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: tt.location})
			if err == nil {
				t.Fatal("want an error")
			}
			if strings.Contains(err.Error(), tt.secret) || !strings.Contains(err.Error(), "REDACTED") {
				t.Fatalf("error %q: want the location redacted", err)
			}
		})
	}
}
