package testenv

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/airshipit/airship-go/internal/localironic"
)

func TestIronic(t *testing.T) {
	inst := Ironic(t, func(o *localironic.Options) { o.Auth = localironic.AuthHTTPBasic })
	if inst.CredentialsFile == "" {
		t.Fatal("no credentials file with http_basic")
	}
	if code, _ := HTTPGet(t.Context(), inst.APIURL+"/"); code != http.StatusOK {
		t.Errorf("GET %s/: %d", inst.APIURL, code)
	}
	// A file dropped in HTTPRoot is served at HTTPURL.
	if err := os.WriteFile(filepath.Join(inst.HTTPRoot, "image.raw"), []byte("raw"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := HTTPGet(t.Context(), inst.HTTPURL+"/image.raw"); code != http.StatusOK || body != "raw" {
		t.Errorf("GET image: %d %q", code, body)
	}
}
