package main

import (
	"fmt"
	"strconv"
	"strings"
)

// phases are the benchmarks of a run (-mode). They run in this order on
// one pipeline: sales first, so that its figure is that of a fresh stack.
type phases struct {
	Sales, Reads, Redeems, Dispatch bool
}

// parsePhases reads -mode: "all", or a comma-separated list of sales,
// reads, redeems and dispatch.
func parsePhases(s string) (phases, error) {
	var p phases
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(name) {
		case "all":
			p = phases{Sales: true, Reads: true, Redeems: true, Dispatch: true}
		case "sales":
			p.Sales = true
		case "reads":
			p.Reads = true
		case "redeems":
			p.Redeems = true
		case "dispatch":
			p.Dispatch = true
		default:
			return p, fmt.Errorf("unknown benchmark %q: want sales, reads, redeems, dispatch or all", strings.TrimSpace(name))
		}
	}
	return p, nil
}

func (p phases) String() string {
	var names []string
	for _, ph := range []struct {
		on   bool
		name string
	}{{p.Sales, "sales"}, {p.Reads, "reads"}, {p.Redeems, "redeems"}, {p.Dispatch, "dispatch"}} {
		if ph.on {
			names = append(names, ph.name)
		}
	}
	return strings.Join(names, ",")
}

// needsAPI reports whether a phase calls the API router.
func (p phases) needsAPI() bool { return p.Reads || p.Redeems }

// maxReadClients bounds a read level and a sales level: each client holds
// a connection and a file descriptor on both ends of the loopback.
const maxReadClients = 4096

// parseLevels reads -read-concurrency: positive client counts,
// comma-separated, measured in the order given.
func parseLevels(s string) ([]int, error) {
	var levels []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxReadClients {
			return nil, fmt.Errorf("%q: want client counts from 1 to %d, comma-separated", strings.TrimSpace(f), maxReadClients)
		}
		levels = append(levels, n)
	}
	return levels, nil
}
