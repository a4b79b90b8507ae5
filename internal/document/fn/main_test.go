package fn

import "flag"

var update = flag.Bool("update", false, "rewrite the golden expected.yaml files from the actual output")
