package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/secretbox"
)

// ErrWrongSecretsKey is the error of a SECRETS_KEY (and
// SECRETS_KEY_PREVIOUS, when set) that cannot open this database's
// secrets: every program refuses to start with it. The message is the
// line the operator reads.
var ErrWrongSecretsKey = errors.New(`SECRETS_KEY cannot open the secrets of this database (it is not the key they were sealed with). ` +
	`Restore the right key, or to change keys set SECRETS_KEY_PREVIOUS=<old key> with SECRETS_KEY=<new key> and run "api secrets rotate"`)

// checkColumn is the check value of the key: the one row of secrets_check
// (migration 00018). It belongs to no merchant: its additional data names
// only its table and column.
var checkColumn = sealedColumn{"secrets_check", "value_sealed"}

// checkText is what the check value seals: opening it to anything else
// is a wrong key too.
const checkText = "convida secrets check v1"

func checkAAD() []byte { return secretbox.AAD(checkColumn.table, checkColumn.column) }

// CheckSecretsKey tells whether box (SECRETS_KEY, and SECRETS_KEY_PREVIOUS
// during a rotation) is the key of this database's secrets: it opens the
// check value, and returns ErrWrongSecretsKey when it cannot. The first
// start stores the check value, sealed with the current key, unless the
// database already holds sealed secrets that the box cannot open (a
// database sealed before the check existed, met with another key). Two
// programs starting together store one value: the first insert wins and
// both read it back. Any other error is the database's, not the key's.
func CheckSecretsKey(ctx context.Context, pool *pgxpool.Pool, box *secretbox.Box) error {
	sealed, err := readCheck(ctx, pool)
	if errors.Is(err, pgx.ErrNoRows) {
		if err := openSomeSecret(ctx, pool, box); err != nil {
			return err
		}
		if _, err := pool.Exec(ctx, `INSERT INTO secrets_check (value_sealed) VALUES ($1) ON CONFLICT DO NOTHING`,
			box.Seal(checkText, checkAAD())); err != nil {
			return fmt.Errorf("secrets check: %w", err)
		}
		sealed, err = readCheck(ctx, pool)
	}
	if err != nil {
		return fmt.Errorf("secrets check: %w", err)
	}
	if plain, err := box.Open(sealed, checkAAD()); err != nil || plain != checkText {
		return ErrWrongSecretsKey
	}
	return nil
}

// HasSecretsCheck reports whether the database holds a check value: some
// program has started on it with a key.
func HasSecretsCheck(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	var exists bool
	err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM secrets_check)`).Scan(&exists)
	return exists, err
}

func readCheck(ctx context.Context, pool *pgxpool.Pool) ([]byte, error) {
	var sealed []byte
	err := pool.QueryRow(ctx, `SELECT value_sealed FROM secrets_check`).Scan(&sealed)
	return sealed, err
}

// openSomeSecret opens one stored sealed value of each sealed column that
// holds any: ErrWrongSecretsKey when the box has none of the keys that
// sealed it. A value sealed for another place is not the key's fault and
// is left to the stores to report.
func openSomeSecret(ctx context.Context, pool *pgxpool.Pool, box *secretbox.Box) error {
	for _, t := range sealedTables {
		for _, c := range t.columns {
			var row sealedRow
			var v []byte
			err := pool.QueryRow(ctx, fmt.Sprintf(`SELECT merchant_id, %[2]s::text, %[3]s FROM %[1]s
WHERE %[3]s IS NOT NULL AND length(%[3]s) > 0 LIMIT 1`, t.name, t.key, c.column)).Scan(&row.merchantID, &row.key, &v)
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("secrets check: %w", err)
			}
			if _, err := c.open(box, v, row.merchantID, row.key); errors.Is(err, secretbox.ErrWrongKey) {
				return ErrWrongSecretsKey
			}
		}
	}
	return nil
}

// rotateCheck re-seals the check value under the current key, by
// compare-and-set like the other values.
func (r *SecretsRotation) rotateCheck(ctx context.Context, out *Rotation) (Resealed, error) {
	var n Resealed
	sealed, err := readCheck(ctx, r.pool)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return n, nil
	case err != nil:
		return n, err
	case r.box.Current(sealed):
		n.AlreadyCurrent++
		return n, nil
	}
	plain, err := r.box.Open(sealed, checkAAD())
	if err != nil || plain != checkText {
		n.Unreadable++
		if len(out.UnreadableAt) < maxUnreadableListed {
			out.UnreadableAt = append(out.UnreadableAt, checkColumn.table+"."+checkColumn.column)
		}
		return n, nil
	}
	tag, err := r.pool.Exec(ctx, `UPDATE secrets_check SET value_sealed = $2 WHERE value_sealed = $1`, sealed, r.box.Seal(plain, checkAAD()))
	if err != nil {
		return n, err
	}
	if tag.RowsAffected() == 1 {
		n.Resealed++
	} else {
		n.Rewritten++
	}
	return n, nil
}
