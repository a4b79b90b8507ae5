package root

import (
	"testing"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/clitest"
)

func TestEveryCommandHasAWorkingExample(t *testing.T) {
	clitest.CheckExamples(t, NewCmd(cli.StdStreams()))
}
