package postgres

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/report"
)

// What the dashboard's list pages share: status tabs with counts, and
// exports read a batch at a time.

// tabsSQL counts, for each status, the rows of table (aliased alias)
// matching where with that status, up to report.TabCap each: one LIMITed
// subquery per status, so a status index serves each. The statuses are
// the domain's constants, never input.
func tabsSQL(table, alias, where string, statuses ...string) string {
	parts := make([]string, len(statuses))
	for i, st := range statuses {
		parts[i] = fmt.Sprintf("SELECT '%[1]s', count(*) FROM (SELECT FROM %[2]s %[3]s WHERE %[4]s AND %[3]s.status = '%[1]s' LIMIT %[5]d) c",
			st, table, alias, where, report.TabCap)
	}
	return strings.Join(parts, "\nUNION ALL\n")
}

// newTabs returns tabs with every status at zero.
func newTabs(statuses ...string) report.Tabs {
	t := make(report.Tabs, len(statuses))
	for _, s := range statuses {
		t[s] = 0
	}
	return t
}

// collectTabs adds (status, count) rows to t.
func collectTabs(t report.Tabs) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		var status string
		var n int
		_, err := pgx.ForEachRow(rows, []any{&status, &n}, func() error {
			t[status] = n
			return nil
		})
		return err
	}
}

// cursor is the position of the last row of an export batch in the lists'
// order (created_at DESC, id DESC); the next batch starts after it. nil
// starts at the newest row.
type cursor struct {
	at time.Time
	id uuid.UUID
}

// cursorArgs are a cursor's two parameters: NULLs for nil.
func cursorArgs(c *cursor) []any {
	if c == nil {
		return []any{nil, nil}
	}
	return []any{c.at, c.id}
}

// ExportBatch is how many rows an export reads per statement: a few
// hundred kilobytes in memory at most, however long the list.
const ExportBatch = 500

// batches yields the rows fetch returns a batch at a time, each batch
// starting after the last row of the previous one (keyset pagination: no
// OFFSET, so the last batch costs what the first does, and no connection
// or snapshot is held while the caller writes). An error ends the
// sequence, yielded with a zero row. Rows written during an export may be
// missed or included; none is repeated.
func batches[T any](ctx context.Context, fetch func(ctx context.Context, after *cursor, limit int) ([]T, error), position func(T) cursor) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var after *cursor
		for {
			batch, err := fetch(ctx, after, ExportBatch)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, row := range batch {
				if !yield(row, nil) {
					return
				}
			}
			if len(batch) < ExportBatch {
				return
			}
			c := position(batch[len(batch)-1])
			after = &c
		}
	}
}
