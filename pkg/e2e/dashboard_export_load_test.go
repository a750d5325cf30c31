package e2e

import (
	"bufio"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/convida/convida/pkg/testenv"
)

// exportRows is the size of the exports held to constant memory (issue 29).
const exportRows = 200_000

// exportHeapBudget bounds how much the live heap may grow while an export
// streams: one batch of the store's (postgres.ExportBatch rows, a few
// hundred KiB) and the buffers of the answer, whatever the number of rows.
// Held whole, 200,000 members took about 100 MiB.
const exportHeapBudget = 16 << 20

// TestLoadDashboardCSVExportsInConstantMemory: the dashboard's members,
// referrals and redemptions exports of a merchant with 200,000 members and
// 200,000 referrals are streamed from the database as they are read, so
// the process's live heap grows by a few MiB at most while each is
// downloaded, not by the size of the file. The client reads the answer a
// MiB at a time and, at each, collects the garbage and reads the live heap
// (the API runs in this process); the largest growth over the heap before
// the request is held to exportHeapBudget, and logged.
func TestLoadDashboardCSVExportsInConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: make test runs it alone, without -short")
	}
	s := startStack(t, stackOptions{noLedger: true, noRecorder: true})
	began := time.Now()
	scale := testenv.Scale{Members: exportRows, Referrals: exportRows, Days: 120, Now: s.clock.Now(), Box: s.deps.Box}
	testenv.MustSeedScale(t, s.deps.Pool, scale)
	t.Logf("seeded %d members and %d referrals in %v", exportRows, exportRows, time.Since(began).Round(time.Millisecond))
	cookie := signInCookie(t, s.apiURL, testenv.DashboardEmail, "pw")

	for _, c := range []struct {
		name, path string
		atLeast    int // rows, header excluded
	}{
		{"members", "/dashboard/members?format=csv", exportRows},
		{"referrals", "/dashboard/referrals?format=csv", exportRows},
		{"redemptions", "/dashboard/redemptions?format=csv", 1},
	} {
		req, _ := http.NewRequest(http.MethodGet, s.apiURL+c.path, nil)
		req.AddCookie(cookie)
		before := liveHeap()
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
			t.Fatalf("%s: GET %s = %d %s", c.name, c.path, res.StatusCode, res.Header.Get("Content-Type"))
		}
		peak, rows, size := before, 0, 0
		br := bufio.NewReaderSize(res.Body, 64<<10)
		for next := 0; ; {
			line, err := br.ReadSlice('\n')
			size += len(line)
			if len(line) > 0 && line[len(line)-1] == '\n' {
				rows++
			}
			if size >= next {
				peak, next = max(peak, liveHeap()), size+1<<20
			}
			if err == io.EOF {
				break
			}
			if err != nil && err != bufio.ErrBufferFull {
				t.Fatalf("%s: reading the export: %v", c.name, err)
			}
		}
		res.Body.Close()
		growth := int64(peak) - int64(before)
		t.Logf("%s: %d rows, %.1f MiB in %v; the live heap grew by at most %.1f MiB (from %.1f MiB)", c.name, rows-1,
			float64(size)/(1<<20), time.Since(start).Round(time.Millisecond), float64(growth)/(1<<20), float64(before)/(1<<20))
		if rows-1 < c.atLeast {
			t.Errorf("%s: %d rows, want at least %d", c.name, rows-1, c.atLeast)
		}
		if growth > exportHeapBudget {
			t.Errorf("%s: the live heap grew by %.1f MiB while the export streamed, want at most %d MiB",
				c.name, float64(growth)/(1<<20), exportHeapBudget>>20)
		}
	}
}

// liveHeap collects the garbage and returns the bytes of the heap still in
// use.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
