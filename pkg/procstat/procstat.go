// Package procstat reads the CPU time of local processes from Linux's
// /proc, for the benchmarks that report what PostgreSQL and Redis spent
// beside the process under test.
package procstat

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Process is one process's CPU time used so far.
type Process struct {
	PID     int
	Command string // the command name of /proc/<pid>/stat, e.g. "postgres"
	CPU     time.Duration
}

// tick is the unit of /proc's times: USER_HZ, 100 on Linux.
const tick = 10 * time.Millisecond

// ByCommand returns every process whose command name is one of names, with
// its user and system CPU time, from /proc/<pid>/stat. Processes that end
// while it reads are left out; off Linux it returns nothing.
func ByCommand(names ...string) []Process {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		stat := string(raw)
		open, closing := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
		if open < 0 || closing < open {
			continue
		}
		comm := stat[open+1 : closing]
		if !slices.Contains(names, comm) {
			continue
		}
		fields := strings.Fields(stat[closing+1:]) // fields[0] is the state, field 3 of stat
		if len(fields) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(fields[11], 10, 64) // field 14
		stime, _ := strconv.ParseInt(fields[12], 10, 64) // field 15
		out = append(out, Process{PID: pid, Command: comm, CPU: time.Duration(utime+stime) * tick})
	}
	return out
}

// Total is the CPU time of every process ByCommand finds for names.
func Total(names ...string) time.Duration {
	var total time.Duration
	for _, p := range ByCommand(names...) {
		total += p.CPU
	}
	return total
}
