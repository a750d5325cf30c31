package main

import (
	"fmt"
	"io"
	"slices"
)

// compareRow is one run's figures in the comparison.
type compareRow struct {
	ordersPerSec, answerP99, creditP99, serviceUS, postgresUS float64
	pass                                                      bool
}

func rowOf(r *report) compareRow {
	_, a99, _ := percentiles(r.AckLat)
	_, c99, _ := percentiles(r.Lat)
	return compareRow{ordersPerSec: r.throughput(), answerP99: a99.Seconds() * 1e3, creditP99: c99.Seconds() * 1e3,
		serviceUS:  r.CPU.perOrder(r.CPU.ByName[standaloneCommand], r.Credited),
		postgresUS: r.CPU.perOrder(r.databaseCPU(), r.Credited), pass: r.pass()}
}

// printComparison prints every run of -compare, then each tree's median
// and the working tree's over REF's.
func printComparison(w io.Writer, o options, trees []tree, results map[string][]*report) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("")
	p("Side by side: %d orders over %d members at %d senders, each build its own process on a fresh database,", o.Orders, o.Members, o.Concurrency)
	p("run alternately; CPU per order read from /proc: the service (cmd/standalone) and the PostgreSQL backends")
	p("of %s; the load generator (this process) is not counted", databaseName(o.Database))
	header := func() {
		p("  %-14s %5s  %8s  %10s  %16s  %10s  %11s  %9s  %s", "tree", "round", "orders/s", "answer p99",
			"order→credit p99", "service µs", "postgres µs", "total µs", "verification")
	}
	line := func(name, round string, r compareRow, verdict string) {
		p("  %-14s %5s  %8.0f  %7.1f ms  %13.1f ms  %10.0f  %11.0f  %9.0f  %s", name, round, r.ordersPerSec,
			r.answerP99, r.creditP99, r.serviceUS, r.postgresUS, r.serviceUS+r.postgresUS, verdict)
	}
	header()
	for _, t := range trees {
		for i, r := range results[t.Name] {
			row := rowOf(r)
			line(t.Name, fmt.Sprint(i+1), row, verdictOf(row.pass))
		}
	}
	p("")
	p("Medians")
	header()
	medians := make([]compareRow, len(trees))
	for i, t := range trees {
		medians[i] = medianRow(results[t.Name])
		line(t.Name, "med", medians[i], verdictOf(medians[i].pass))
	}
	if len(trees) == 2 && medians[0].ordersPerSec > 0 {
		ref, head := medians[0], medians[1]
		p("")
		p("  working tree / REF: orders/s ×%.2f, CPU per order (service + PostgreSQL) %.0f%% of REF's",
			head.ordersPerSec/ref.ordersPerSec, 100*(head.serviceUS+head.postgresUS)/(ref.serviceUS+ref.postgresUS))
	}
}

func verdictOf(pass bool) string {
	if pass {
		return "PASS"
	}
	return "FAIL"
}

// medianRow is each column's median over the runs (pass: all passed).
func medianRow(reps []*report) compareRow {
	var cols [5][]float64
	pass := len(reps) > 0
	for _, r := range reps {
		row := rowOf(r)
		for i, v := range []float64{row.ordersPerSec, row.answerP99, row.creditP99, row.serviceUS, row.postgresUS} {
			cols[i] = append(cols[i], v)
		}
		pass = pass && row.pass
	}
	med := func(v []float64) float64 {
		if len(v) == 0 {
			return 0
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return compareRow{ordersPerSec: med(cols[0]), answerP99: med(cols[1]), creditP99: med(cols[2]),
		serviceUS: med(cols[3]), postgresUS: med(cols[4]), pass: pass}
}
