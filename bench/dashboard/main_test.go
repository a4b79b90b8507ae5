package dashboard

import (
	"testing"

	"github.com/airshipit/airship-go/bench/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m, nil) }
