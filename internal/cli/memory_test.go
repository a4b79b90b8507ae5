package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestSoftMemoryLimit(t *testing.T) {
	saved := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(saved) })
	tests := []struct {
		name, env string
		want      int64
	}{
		{name: "set when GOMEMLIMIT is not", want: 64 << 20},
		{name: "GOMEMLIMIT wins", env: "1GiB", want: math.MaxInt64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetMemoryLimit(math.MaxInt64)
			t.Setenv("GOMEMLIMIT", tc.env)
			SoftMemoryLimit(64 << 20)
			if got := debug.SetMemoryLimit(-1); got != tc.want {
				t.Errorf("memory limit %d, want %d", got, tc.want)
			}
		})
	}
}
