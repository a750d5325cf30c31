package main

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParsePhases(t *testing.T) {
	for in, want := range map[string]phases{
		"sales":          {Sales: true},
		"reads":          {Reads: true},
		"redeems":        {Redeems: true},
		"all":            {Sales: true, Reads: true, Redeems: true, Dispatch: true},
		"dispatch":       {Dispatch: true},
		"reads,redeems":  {Reads: true, Redeems: true},
		" sales , reads": {Sales: true, Reads: true},
	} {
		got, err := parsePhases(in)
		if err != nil || got != want {
			t.Errorf("parsePhases(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "read", "sales,", "everything"} {
		if _, err := parsePhases(in); err == nil {
			t.Errorf("parsePhases(%q) accepted", in)
		}
	}
	if got := (phases{Sales: true, Redeems: true}).String(); got != "sales,redeems" {
		t.Errorf("String() = %q", got)
	}
}

func TestParseLevels(t *testing.T) {
	got, err := parseLevels("1, 8,32,128,512")
	if err != nil || !reflect.DeepEqual(got, []int{1, 8, 32, 128, 512}) {
		t.Errorf("parseLevels = %v, %v", got, err)
	}
	for _, in := range []string{"", "0", "-1", "8,", "x", "5000"} {
		if _, err := parseLevels(in); err == nil {
			t.Errorf("parseLevels(%q) accepted", in)
		}
	}
}

func TestParseOptions(t *testing.T) {
	t.Setenv("SECRETS_KEY", "")
	o, err := parseOptions(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Phases != (phases{Sales: true}) || !reflect.DeepEqual(o.ReadLevels, []int{1, 8, 32, 128, 512}) ||
		o.ReadDuration != 5*time.Second || o.Redemptions != 2000 || o.RedeemConcurrency != 32 || o.PlatformDelay != 0 {
		t.Errorf("defaults = %+v", o)
	}
	o, err = parseOptions([]string{"-mode", "all", "-read-concurrency", "4,16", "-read-duration", "2s",
		"-redemptions", "500", "-redeem-concurrency", "8", "-platform-delay", "50ms", "-deliveries", "300"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Phases != (phases{Sales: true, Reads: true, Redeems: true, Dispatch: true}) || o.Deliveries != 300 || !reflect.DeepEqual(o.ReadLevels, []int{4, 16}) ||
		o.ReadDuration != 2*time.Second || o.Redemptions != 500 || o.RedeemConcurrency != 8 || o.PlatformDelay != 50*time.Millisecond {
		t.Errorf("parsed = %+v", o)
	}

	t.Setenv("SECRETS_KEY", "c2VjcmV0")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-mode", "sideways"}, "-mode"},
		{[]string{"-read-concurrency", "0"}, "-read-concurrency"},
		{[]string{"-read-duration", "0s"}, "-read-duration"},
		{[]string{"-redemptions", "0"}, "-redemptions"},
		{[]string{"-redeem-concurrency", "0"}, "-redeem-concurrency"},
		{[]string{"-deliveries", "0"}, "-deliveries"},
		{[]string{"-mode", "dispatch", "-ingest", "http://127.0.0.1:8081"}, "in-process"},
		{[]string{"-platform-delay", "-1ms"}, "-platform-delay"},
		{[]string{"-mode", "reads", "-ingest", "http://127.0.0.1:8081"}, "in-process"},
		{[]string{"-mode", "all", "-ingest", "http://127.0.0.1:8081"}, "in-process"},
		{[]string{"-retention-rows", "-1"}, "-retention-rows"},
		{[]string{"-retention-rows", "1000", "-mode", "reads"}, "-retention-rows"},
		{[]string{"-retention-rows", "1000", "-ingest", "http://127.0.0.1:8081"}, "-retention-rows"},
	} {
		if _, err := parseOptions(tc.args, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseOptions(%q) = %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
	if _, err := parseOptions([]string{"-mode", "sales", "-ingest", "http://127.0.0.1:8081"}, io.Discard); err != nil {
		t.Errorf("sales against a running ingest: %v", err)
	}
	if o, err := parseOptions([]string{"-retention-rows", "50000"}, io.Discard); err != nil || o.RetentionRows != 50000 {
		t.Errorf("-retention-rows 50000: %+v, %v", o, err)
	}
}

func TestSalesLevels(t *testing.T) {
	t.Setenv("SECRETS_KEY", "")
	o, err := parseOptions(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.SalesLevels, []int{32}) || o.Concurrency != 32 {
		t.Errorf("default senders: levels %v, concurrency %d; want [32], 32", o.SalesLevels, o.Concurrency)
	}
	o, err = parseOptions([]string{"-concurrency", "32, 512"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.SalesLevels, []int{32, 512}) || o.Concurrency != 32 {
		t.Errorf("-concurrency 32,512: levels %v, concurrency %d", o.SalesLevels, o.Concurrency)
	}
	for _, in := range []string{"0", "32,", "x", "32,5000"} {
		if _, err := parseOptions([]string{"-concurrency", in}, io.Discard); err == nil || !strings.Contains(err.Error(), "-concurrency") {
			t.Errorf("-concurrency %q: %v, want an error naming -concurrency", in, err)
		}
	}
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tbench\nVmPeak:\t  900000 kB\nVmRSS:\t  123456 kB\nRssAnon:\t  100000 kB\n"
	if got := parseVmRSS(status); got != 123456<<10 {
		t.Errorf("parseVmRSS = %d, want %d", got, 123456<<10)
	}
	for _, in := range []string{"", "VmRSS:\t12 MB\n", "VmRSS:\tx kB\n"} {
		if got := parseVmRSS(in); got != 0 {
			t.Errorf("parseVmRSS(%q) = %d, want 0", in, got)
		}
	}
	if residentBytes() <= 0 {
		t.Error("residentBytes of this process is 0") // the bench runs on Linux
	}
}

func TestTitleDatabase(t *testing.T) {
	for title, want := range map[string]string{
		"postgres: 15/main: postgres convida_bench 127.0.0.1(35618) idle":                "convida_bench",
		"postgres: 15/main: postgres convida_bench_x [local] idle in transaction":        "convida_bench_x",
		"postgres: 15/main: walwriter                                                  ": "",
		"/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main":             "",
	} {
		if got := titleDatabase(title); got != want {
			t.Errorf("titleDatabase(%q) = %q, want %q", title, got, want)
		}
	}
}

func TestBusMetricsMinus(t *testing.T) {
	before := busMetrics{LedgerTxns: histogramSum{Count: 10, Sum: 100}, LedgerBatches: histogramSum{Count: 30, Sum: 100}}
	after := busMetrics{LedgerTxns: histogramSum{Count: 14, Sum: 300}, LedgerBatches: histogramSum{Count: 40, Sum: 300}}
	d := after.minus(before)
	if d.LedgerTxns.Count != 4 || d.LedgerTxns.mean() != 50 || d.LedgerBatches.mean() != 20 {
		t.Errorf("difference %+v: want 4 transactions of 50 commands, batches of 20", d)
	}
	if (histogramSum{}).mean() != 0 {
		t.Error("the mean of no samples is not 0")
	}
}
