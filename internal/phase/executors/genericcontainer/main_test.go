package genericcontainer

import (
	"flag"
	"os"
	"testing"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata from the actual output")

// env is a real API server for the scripts' kubectl.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, func() (*testenv.Env, error) {
		return testenv.NewAPI(testenv.Options{})
	}, func(e *testenv.Env) { env = e }))
}
