// Package postgres is the PostgreSQL adapter: the pgx pool, migrations, the
// transaction helper, the SQLSTATE → apperr mapping and the store
// implementations of the domain packages. SQL lives here, nowhere else.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jackc/puddle/v2"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"

	"github.com/convida/convida/migrations"
	"github.com/convida/convida/pkg/apperr"
)

// Open connects a pool to url and checks the connection.
func Open(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	pool, err := NewPool(url, maxConns)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping postgres: %w", err)
	}
	return pool, nil
}

// NewPool returns a pool on url without connecting: its first use does,
// and every use after a connection failed tries again. maxConns 0 keeps
// pgxpool's default. Only a url that does not parse is an error.
func NewPool(url string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	// Our batch statements join unnest($arrays) to the tables. A generic
	// plan (the default after five executions of a prepared statement)
	// knows neither the arrays' length nor, when made early, the tables'
	// growth, and settled on sequential scans: throughput fell with table
	// size. Custom plans are made per execution with the real arrays.
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	// pgx encodes a google/uuid.UUID through its driver.Valuer, a string
	// it then parses back, and fails over several encode plans first (each
	// building an error): 15% of the pipeline's CPU in the bench profile.
	// The codec writes the 16 bytes directly; registerFastArrays does as
	// much for the arrays our batch statements send.
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		pgxuuid.Register(conn.TypeMap())
		registerFastArrays(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres pool: %w", err)
	}
	return pool, nil
}

// Migrate applies every pending migration of migrations.FS. A Postgres
// session lock serialises concurrent callers, so every program may run it
// at start: the others wait for the lock, asking every second for up to
// MigrationLockWait, then find nothing left to apply
// (TestTwoAPIsMigrateAnOldDatabaseOnce in cmd/api).
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	return migrateDB(ctx, db)
}

// MigrationLockWait is how long a program waits for another's migrations
// before it gives up and exits (goose's default, 5 minutes, is short for an
// index built on a large table).
const MigrationLockWait = 30 * time.Minute

func migrateDB(ctx context.Context, db *sql.DB) error {
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, uint64(MigrationLockWait/time.Second)))
	if err != nil {
		return err
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// EnsureDatabase creates the database named in url when it does not exist,
// connecting to the server's postgres database to do so.
func EnsureDatabase(ctx context.Context, url string) error {
	conn, name, err := serverConn(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	if pgErrCode(err) == "42P04" { // created concurrently by another process
		return nil
	}
	return err
}

// DatabaseOf returns the name and the host of the database of url, for
// messages that must not show its password.
func DatabaseOf(url string) (name, host string, err error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return "", "", fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	return pcfg.ConnConfig.Database, pcfg.ConnConfig.Host, nil
}

// DropDatabase drops the database named in url, connecting to the
// server's postgres database to do so. A database that does not exist is
// no error; one that programs are connected to is (they must stop first).
func DropDatabase(ctx context.Context, url string) error {
	conn, name, err := serverConn(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize())
	if pgErrCode(err) == "55006" { // object_in_use
		return fmt.Errorf("the database %s is in use: stop the programs connected to it (make run) first", name)
	}
	return err
}

// serverConn connects to the server of url, on its postgres database, and
// returns the name of url's database: to create or drop it.
func serverConn(ctx context.Context, url string) (*pgx.Conn, string, error) {
	// Parsed as a pool's URL: pgxpool takes its pool_* settings (such as
	// pool_max_conns) out, which the server would refuse as parameters.
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, "", fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	cfg := pcfg.ConnConfig
	name := cfg.Database
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("connect to postgres: %w", err)
	}
	return conn, name, nil
}

// InTx runs fn in a transaction, committing when fn returns nil. The public
// method that calls InTx owns the transaction; helpers take the pgx.Tx.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, pool, fn)
}

func pgErrCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// isUniqueViolation reports whether err is SQLSTATE 23505 on the named
// constraint (any constraint when name is "").
func isUniqueViolation(err error, name string) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		return false
	}
	return name == "" || pgErr.ConstraintName == name
}

// notFound maps pgx.ErrNoRows to an apperr.NotFound with the message.
func notFound(err error, message string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return apperr.Errorf(apperr.NotFound, "%s", message)
	}
	return err
}

// IsPermanent reports whether err is a database error that retrying cannot
// fix: a data exception (SQLSTATE class 22) or an integrity violation
// (class 23) other than a unique violation, which a concurrent writer may
// cause and a retry resolves.
func IsPermanent(err error) bool {
	code := pgErrCode(err)
	if len(code) != 5 || code == "23505" {
		return false
	}
	return code[:2] == "22" || code[:2] == "23"
}

// Unavailable reports whether err says that PostgreSQL could not be
// reached or dropped the connection — refused, reset or timed out, shut
// down or starting up (SQLSTATE 57P01–57P03), a connection exception
// (class 08), too many connections (53300), a closed pool — rather than
// that it refused the statement. Retrying later may succeed; nothing the
// caller sent is at fault. An error the server answered with for the
// statement or the session's credentials (a wrong password: 28P01) is not.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch code := pgErr.Code; {
		case len(code) == 5 && code[:2] == "08", code == "57P01", code == "57P02", code == "57P03", code == "53300":
			return true
		default:
			return false
		}
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, puddle.ErrClosedPool) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn)
}

// Classify returns err as apperr.ServiceUnavailable when it says that
// PostgreSQL could not be reached (Unavailable), so that an edge answers
// 503 with Retry-After rather than 500; any other error, and one that
// already carries a code, is returned as it is. The edges call it where
// a store's error leaves them (httpapi.Config.Classify,
// dashboard.Config.Classify): every store method is covered without
// each one wrapping its errors.
func Classify(err error) error {
	if apperr.CodeOf(err) != apperr.Internal || !Unavailable(err) {
		return err
	}
	return apperr.Wrap(apperr.ServiceUnavailable, err, "the service is briefly unavailable; retry in a moment")
}
