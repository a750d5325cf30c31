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
// start stores the check value, sealed with the current key (on a database
// of a version before the check, the key the programs run with). Two
// programs starting together store one value: the first insert wins and
// both read it back. Any other error is the database's, not the key's.
// The one way past a key lost for good is to delete the check value: the
// secrets sealed with the lost key stay unreadable, to be set again.
func CheckSecretsKey(ctx context.Context, pool *pgxpool.Pool, box *secretbox.Box) error {
	sealed, err := readCheck(ctx, pool)
	if errors.Is(err, pgx.ErrNoRows) {
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

// DatabaseInUse reports whether the database of url already holds
// merchants or a check value of SECRETS_KEY: secrets sealed with some key.
// It creates nothing: a database that does not exist, or has no schema
// yet, holds none.
func DatabaseInUse(ctx context.Context, url string) (bool, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return false, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, pcfg.ConnConfig)
	if pgErrCode(err) == "3D000" { // invalid_catalog_name: no such database
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(ctx)
	var merchants, check bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('public.merchants') IS NOT NULL, to_regclass('public.secrets_check') IS NOT NULL`).
		Scan(&merchants, &check); err != nil {
		return false, err
	}
	for table, exists := range map[string]bool{"merchants": merchants, "secrets_check": check} {
		if !exists {
			continue
		}
		var rows bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+`)`).Scan(&rows); err != nil {
			return false, err
		}
		if rows {
			return true, nil
		}
	}
	return false, nil
}
