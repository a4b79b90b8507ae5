package hostopstest

import (
	"net/http"
	"sync"
	"testing"

	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// EmulatedBMC is the Redfish handler of one emulated host, host-0000,
// accepting username and password; the emulator is closed when the test
// ends. Serve it behind a Recorder to see which requests reached it.
func EmulatedBMC(t testing.TB, username, password string) http.Handler {
	t.Helper()
	srv, err := emulator.New(emulator.Config{Username: username, Password: password, Hosts: emulator.Generate(1, 1)}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv.Handler()
}

// Recorder passes requests to Next and records the Host each named (a
// proxy sees the BMC's host, a BMC its own).
type Recorder struct {
	Next  http.Handler
	mu    sync.Mutex
	hosts []string
}

func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.hosts = append(r.hosts, req.Host)
	r.mu.Unlock()
	r.Next.ServeHTTP(w, req)
}

// Hosts returns the Host of every request so far, in order.
func (r *Recorder) Hosts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.hosts...)
}
