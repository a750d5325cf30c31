// Package migrations holds the SQL schema of Convida, applied in order by
// goose (see pkg/postgres.Migrate). Files are embedded so every program
// carries its own schema and applies it at start.
package migrations

import "embed"

// FS holds the numbered goose SQL migrations.
//
//go:embed *.sql
var FS embed.FS
