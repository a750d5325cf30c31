package dashboard

import (
	"encoding/csv"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// CSV is a CSV download written as its rows come (issue 29): an export of
// 200,000 members holds one batch of the store's in memory, not the whole
// list. The answer's headers and the header row are written with the
// first row (or at Close when there is none), so that an error before any
// row can still be answered as a page. Cells that a spreadsheet would run
// as a formula are prefixed with a quote.
type CSV struct {
	w        http.ResponseWriter
	cw       *csv.Writer
	filename string
	header   []string
	started  bool
	safe     []string // the row being written, reused
	rows     int
}

// exportWriteWindow is how long the rows after each deadlineEvery rows
// may take to reach the client: the server's WriteTimeout (30 s) bounds a
// whole answer, and a long export is many answers' worth of writing, so
// the deadline moves with the download instead (a stalled client is still
// cut after it).
const (
	exportWriteWindow = 30 * time.Second
	deadlineEvery     = 1000
)

// NewCSV returns the download named filename of w, whose columns are
// header.
func NewCSV(w http.ResponseWriter, filename string, header []string) *CSV {
	return &CSV{w: w, filename: filename, header: header}
}

// Started reports whether the answer has begun: after it, an error can
// only cut the download.
func (c *CSV) Started() bool { return c.started }

// Write writes one row, after the answer's headers and the header row when
// it is the first. The error is the client's connection's.
func (c *CSV) Write(row ...string) error {
	if err := c.start(); err != nil {
		return err
	}
	c.safe = c.safe[:0]
	for _, cell := range row {
		c.safe = append(c.safe, csvSafe(cell))
	}
	if c.rows++; c.rows%deadlineEvery == 0 {
		c.extendDeadline()
	}
	return c.cw.Write(c.safe)
}

// extendDeadline moves the connection's write deadline exportWriteWindow
// ahead; a writer without one (a test's recorder) is left as it is.
func (c *CSV) extendDeadline() {
	_ = http.NewResponseController(c.w).SetWriteDeadline(time.Now().Add(exportWriteWindow))
}

// Close writes what is still buffered, and the header row of an empty
// download.
func (c *CSV) Close() error {
	if err := c.start(); err != nil {
		return err
	}
	c.cw.Flush()
	return c.cw.Error()
}

func (c *CSV) start() error {
	if c.started {
		return nil
	}
	c.started = true
	c.extendDeadline()
	h := c.w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+strings.ReplaceAll(c.filename, `"`, "")+`"`)
	h.Set("Cache-Control", "no-store")
	c.cw = csv.NewWriter(c.w)
	return c.cw.Write(c.header)
}

func csvSafe(cell string) string {
	if _, err := strconv.ParseFloat(cell, 64); err == nil {
		return cell // a number, negative ones included, stays a number
	}
	if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return "'" + cell
	}
	return cell
}

// exportCSV answers rows (a store's export, read in batches) as out, each
// row's cells made by cells, written as it is read. An error before the
// first row is answered as a page (fail); one after the download began
// cuts it, dropping the connection (http.ErrAbortHandler), so that a
// partial file is never taken for a whole one.
func exportCSV[T any](d *Dashboard, w http.ResponseWriter, r *http.Request, c *Ctx, out *CSV, rows iter.Seq2[T, error], cells func(T) []string) {
	for row, err := range rows {
		if err != nil {
			if !out.Started() {
				d.fail(w, r, c, err)
				return
			}
			d.log.Warn("dashboard: a CSV export was cut short", zap.String("route", r.Pattern), zap.Error(err))
			panic(http.ErrAbortHandler)
		}
		if out.Write(cells(row)...) != nil {
			return // the client went away
		}
	}
	_ = out.Close()
}
