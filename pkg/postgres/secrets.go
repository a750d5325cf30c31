package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/secretbox"
)

// sealedColumn is a column of values sealed with the secretbox. A value's
// additional data (SealedAt) names the table, the column, the merchant and
// the row's key within the merchant: none of them changes over a row's
// life, so an update keeps the row's values openable, while a value copied
// to another merchant, row or column does not open.
type sealedColumn struct{ table, column string }

var (
	accountTokenColumn     = sealedColumn{"integration_settings", "account_token_enc"}
	webhookSecretColumn    = sealedColumn{"integration_settings", "webhook_secret_enc"}
	userTokenColumn        = sealedColumn{"integration_settings", "user_token_enc"}
	userSecretKeyColumn    = sealedColumn{"integration_settings", "user_secret_key_enc"}
	clientSecretColumn     = sealedColumn{"integration_settings", "client_secret_enc"}
	basicTokenColumn       = sealedColumn{"integration_settings", "basic_token_enc"}
	endpointSecretColumn   = sealedColumn{"webhook_endpoints", "secret_sealed"}
	endpointPreviousColumn = sealedColumn{"webhook_endpoints", "previous_secret_sealed"}
	creatorTokenColumn     = sealedColumn{"creator_profiles", "token_enc"}
)

// integrationColumns are the sealed columns of integration_settings, in
// the order the merchant store reads them.
var integrationColumns = []sealedColumn{accountTokenColumn, webhookSecretColumn, userTokenColumn, userSecretKeyColumn,
	clientSecretColumn, basicTokenColumn}

// sealedTable is a table with sealed columns, and the column that keys a
// row within its merchant (with merchant_id, the primary key).
type sealedTable struct {
	name    string
	key     string // the row's key: the last part of the additional data
	keyType string // its SQL type
	columns []sealedColumn
}

// sealedTables are every table holding sealed values: what `api secrets
// rotate` re-seals. A new sealed column is added here, or a rotation
// leaves it under the old key.
var sealedTables = []sealedTable{
	{name: "integration_settings", key: "provider", keyType: "text",
		columns: integrationColumns},
	{name: "webhook_endpoints", key: "id", keyType: "uuid",
		columns: []sealedColumn{endpointSecretColumn, endpointPreviousColumn}},
	{name: "creator_profiles", key: "member_id", keyType: "uuid", columns: []sealedColumn{creatorTokenColumn}},
}

// SealedColumns names the sealed columns a rotation re-seals, as
// "table.column": those of sealedTables and the key's check value
// (secrets_check.value_sealed, CheckSecretsKey).
func SealedColumns() []string {
	var out []string
	for _, t := range sealedTables {
		for _, c := range t.columns {
			out = append(out, c.table+"."+c.column)
		}
	}
	return append(out, checkColumn.table+"."+checkColumn.column)
}

// SealedAt is the additional data that binds a value of table.column to
// the merchant's row keyed row (an integration's provider, an endpoint's
// id, a creator's member id). The stores seal and open with it; a test or
// a seed that writes sealed columns itself uses it too.
func SealedAt(table, column string, merchantID uuid.UUID, row string) []byte {
	return secretbox.AAD(table, column, merchantID.String(), row)
}

func (c sealedColumn) at(merchantID uuid.UUID, row string) []byte {
	return SealedAt(c.table, c.column, merchantID, row)
}

// seal seals plaintext for the merchant's row of c.
func (c sealedColumn) seal(box *secretbox.Box, plaintext string, merchantID uuid.UUID, row string) []byte {
	return box.Seal(plaintext, c.at(merchantID, row))
}

// open opens a value of the merchant's row of c. Its error names the place
// (never the value), so an operator knows which secret the key cannot open.
func (c sealedColumn) open(box *secretbox.Box, sealed []byte, merchantID uuid.UUID, row string) (string, error) {
	plain, err := box.Open(sealed, c.at(merchantID, row))
	if err != nil {
		return "", fmt.Errorf("%s.%s of merchant %s, row %s: %w", c.table, c.column, merchantID, row, err)
	}
	return plain, nil
}

// SecretsRotation re-seals every sealed value that is not in the current
// format under the current key (SECRETS_KEY): those under a previous key
// (SECRETS_KEY_PREVIOUS) or of the format before key ids.
type SecretsRotation struct {
	pool *pgxpool.Pool
	box  *secretbox.Box
	// Batch is how many rows one transaction re-seals; zero means 100.
	Batch int
}

// NewSecretsRotation returns a rotation re-sealing with box's current key.
func NewSecretsRotation(pool *pgxpool.Pool, box *secretbox.Box) *SecretsRotation {
	return &SecretsRotation{pool: pool, box: box}
}

// Resealed counts the sealed values of a table, by what a rotation did.
type Resealed struct {
	// Resealed were re-sealed under the current key.
	Resealed int `json:"resealed"`
	// AlreadyCurrent were already under it.
	AlreadyCurrent int `json:"already_current"`
	// Rewritten were written by someone else (a running program) between
	// the rotation's read and its write, and left as written.
	Rewritten int `json:"rewritten"`
	// Unreadable open with none of the keys, or not for their place; they
	// are left as they are.
	Unreadable int `json:"unreadable"`
}

func (r *Resealed) add(o Resealed) {
	r.Resealed += o.Resealed
	r.AlreadyCurrent += o.AlreadyCurrent
	r.Rewritten += o.Rewritten
	r.Unreadable += o.Unreadable
}

// Rotation is what Rotate did.
type Rotation struct {
	Resealed
	// Tables are the counts by table.
	Tables map[string]Resealed `json:"tables"`
	// UnreadableAt names the first unreadable values (at most 20): table,
	// column, merchant and row, never the value.
	UnreadableAt []string `json:"unreadable_at"`
}

const maxUnreadableListed = 20

// Rotate re-seals, table by table in batches of r.Batch rows, every value
// not in the current format under the current key, then the key's check
// value (CheckSecretsKey). Each batch is read,
// re-sealed in memory, and written in one transaction by compare-and-set
// (UPDATE … WHERE column = the value read), so a value a running program
// wrote meanwhile is never overwritten: it counts as Rewritten. Repeating
// Rotate is safe, and re-seals nothing that an earlier run did. Values
// that do not open are counted, named in UnreadableAt and left alone; the
// error is only a database one.
func (r *SecretsRotation) Rotate(ctx context.Context) (Rotation, error) {
	out := Rotation{Tables: map[string]Resealed{}, UnreadableAt: []string{}}
	for _, t := range sealedTables {
		n, err := r.rotateTable(ctx, t, &out)
		if err != nil {
			return out, fmt.Errorf("re-seal %s: %w", t.name, err)
		}
		out.Tables[t.name] = n
		out.add(n)
	}
	n, err := r.rotateCheck(ctx, &out)
	if err != nil {
		return out, fmt.Errorf("re-seal %s: %w", checkColumn.table, err)
	}
	out.Tables[checkColumn.table] = n
	out.add(n)
	return out, nil
}

// sealedRow is a row of a sealedTable as a rotation reads it.
type sealedRow struct {
	merchantID uuid.UUID
	key        string
	values     [][]byte // by column of the table
}

// reseal is one compare-and-set write of a rotation.
type reseal struct {
	column   sealedColumn
	row      *sealedRow
	old, new []byte
}

func (r *SecretsRotation) rotateTable(ctx context.Context, t sealedTable, out *Rotation) (Resealed, error) {
	var n Resealed
	var after *sealedRow
	for {
		rows, err := r.readBatch(ctx, t, after)
		if err != nil || len(rows) == 0 {
			return n, err
		}
		after = &rows[len(rows)-1]
		var writes []reseal
		for i := range rows {
			row := &rows[i]
			for j, c := range t.columns {
				v := row.values[j]
				switch {
				case len(v) == 0:
				case r.box.Current(v):
					n.AlreadyCurrent++
				default:
					plain, err := c.open(r.box, v, row.merchantID, row.key)
					if err != nil {
						n.Unreadable++
						if len(out.UnreadableAt) < maxUnreadableListed {
							out.UnreadableAt = append(out.UnreadableAt,
								fmt.Sprintf("%s.%s merchant %s row %s", c.table, c.column, row.merchantID, row.key))
						}
						continue
					}
					writes = append(writes, reseal{column: c, row: row, old: v, new: c.seal(r.box, plain, row.merchantID, row.key)})
				}
			}
		}
		done, err := r.write(ctx, t, writes)
		if err != nil {
			return n, err
		}
		n.Resealed += done
		n.Rewritten += len(writes) - done
	}
}

// readBatch reads the rows of t after the row after (from the first when
// nil), in key order.
func (r *SecretsRotation) readBatch(ctx context.Context, t sealedTable, after *sealedRow) ([]sealedRow, error) {
	limit := r.Batch
	if limit <= 0 {
		limit = 100
	}
	cols := make([]string, len(t.columns))
	for i, c := range t.columns {
		cols[i] = c.column
	}
	where, args := "", []any{limit}
	if after != nil {
		where = fmt.Sprintf("WHERE (merchant_id, %s) > ($2, $3::text::%s)", t.key, t.keyType)
		args = append(args, after.merchantID, after.key)
	}
	rows, err := r.pool.Query(ctx, fmt.Sprintf(`SELECT merchant_id, %[2]s::text, %[3]s FROM %[1]s %[4]s
ORDER BY merchant_id, %[2]s LIMIT $1`, t.name, t.key, strings.Join(cols, ", "), where), args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (sealedRow, error) {
		s := sealedRow{values: make([][]byte, len(t.columns))}
		dest := []any{&s.merchantID, &s.key}
		for i := range s.values {
			dest = append(dest, &s.values[i])
		}
		return s, row.Scan(dest...)
	})
}

// write applies writes in one transaction and returns how many found their
// column still holding the value read.
func (r *SecretsRotation) write(ctx context.Context, t sealedTable, writes []reseal) (int, error) {
	if len(writes) == 0 {
		return 0, nil
	}
	done := 0
	err := InTx(ctx, r.pool, func(tx pgx.Tx) error {
		done = 0
		b := &pgx.Batch{}
		for _, w := range writes {
			b.Queue(fmt.Sprintf(`UPDATE %[1]s SET %[2]s = $4 WHERE merchant_id = $1 AND %[3]s = $2::text::%[4]s AND %[2]s = $3`,
				t.name, w.column.column, t.key, t.keyType), w.row.merchantID, w.row.key, w.old, w.new)
		}
		results := tx.SendBatch(ctx, b)
		for range writes {
			tag, err := results.Exec()
			if err != nil {
				_ = results.Close()
				return err
			}
			done += int(tag.RowsAffected())
		}
		return results.Close()
	})
	return done, err
}
