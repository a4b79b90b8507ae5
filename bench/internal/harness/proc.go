package harness

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// userHZ is the unit of the CPU times in /proc/PID/stat: USER_HZ, 100 on
// every Linux the project runs on (it is fixed by the kernel ABI, whatever
// the kernel's own tick rate).
const userHZ = 100

// CPUSeconds reads the user plus system CPU time a running process has
// used so far, from /proc/PID/stat. Two readings around a phase give the
// CPU the process spent on it; a process that exits takes its figure with
// it, so read it before stopping the process.
func CPUSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	fields := strings.Fields(string(data[i+2:]))
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	var ticks uint64
	for _, f := range fields[11:13] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("malformed /proc/%d/stat: %w", pid, err)
		}
		ticks += v
	}
	return float64(ticks) / userHZ, nil
}
