package fn_test

import (
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/document/fn"
)

// Runner is what the document layer's Build takes to run functions.
var _ document.FunctionRunner = (*fn.Runner)(nil)
