package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SessionStore keeps the dashboard's sessions for scs's session manager
// (the sessions table, migrations 00009 and 00025):
//
//   - by the SHA-256 of the token, never the token, so that the table
//     cannot be replayed as cookies;
//   - on the store's clock: scs asks for an expiry on the real clock, and
//     the store keeps the same remaining lifetime from its own now, and
//     finds only sessions whose expiry is after its now. The retention
//     sweep deletes the expired ones on the scheduler's clock, the same one
//     in production (a test pins both).
//
// It runs no cleanup goroutine of its own (one would outlive every router a
// test builds, and run on every replica): the scheduler's retention sweep
// deletes expired sessions (RetentionStore).
type SessionStore struct {
	pool  *pgxpool.Pool
	now   func() time.Time
	table string // sessions, or portal_sessions (NewPortalSessionStore)
}

var _ scs.CtxStore = (*SessionStore)(nil)

// NewSessionStore returns the dashboard's session store on now's clock.
func NewSessionStore(pool *pgxpool.Pool, now func() time.Time) *SessionStore {
	return &SessionStore{pool: pool, now: now, table: "sessions"}
}

// NewPortalSessionStore returns the member portal's session store
// (portal_sessions, migration 00030): the same rules, its own table, so
// that a member's cookie can never be a dashboard session.
func NewPortalSessionStore(pool *pgxpool.Pool, now func() time.Time) *SessionStore {
	return &SessionStore{pool: pool, now: now, table: "portal_sessions"}
}

// sessionKey is what a token is kept as: the lower-case hex of its SHA-256.
func sessionKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// FindCtx returns the data of the session token names, and whether it is
// there and not expired.
func (s *SessionStore) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT data FROM `+s.table+` WHERE token_hash = $1 AND expiry > $2`,
		sessionKey(token), s.now()).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// CommitCtx adds or replaces the session token names, valid for as long
// from the store's now as expiry is from the real now.
func (s *SessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO `+s.table+` (token_hash, data, expiry) VALUES ($1, $2, $3)
  ON CONFLICT (token_hash) DO UPDATE SET data = EXCLUDED.data, expiry = EXCLUDED.expiry`,
		sessionKey(token), b, s.now().Add(time.Until(expiry)))
	return err
}

// DeleteCtx removes the session token names; a missing one is no error.
func (s *SessionStore) DeleteCtx(ctx context.Context, token string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM `+s.table+` WHERE token_hash = $1`, sessionKey(token))
	return err
}

// Find is FindCtx without a context (scs.Store).
func (s *SessionStore) Find(token string) ([]byte, bool, error) {
	return s.FindCtx(context.Background(), token)
}

// Commit is CommitCtx without a context (scs.Store).
func (s *SessionStore) Commit(token string, b []byte, expiry time.Time) error {
	return s.CommitCtx(context.Background(), token, b, expiry)
}

// Delete is DeleteCtx without a context (scs.Store).
func (s *SessionStore) Delete(token string) error { return s.DeleteCtx(context.Background(), token) }
