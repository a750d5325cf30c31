package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/secretbox"
)

// errUsage marks a command line that does not parse (exit status 2).
var errUsage = errors.New("usage")

// command is one administrative command: what it does, and its flags,
// whose definition returns the action to run once they are parsed.
type command struct {
	about string
	flags func(fs *flag.FlagSet) action
	// secrets marks a command that reads SECRETS_KEY and
	// SECRETS_KEY_PREVIOUS: they are checked before anything connects.
	secrets bool
}

// action runs a command with its connections.
type action func(ctx context.Context, c conn) (any, error)

// conn is what an action works with.
type conn struct {
	pool      *pgxpool.Pool
	merchants *postgres.MerchantStore
	box       *secretbox.Box // commands marked secrets only
}

// commands are the administrative commands of decision 3, by name.
var commands = map[string]command{
	"merchant create": {
		about: "Creates a merchant with its first API key and dashboard login, and prints them (shown once)",
		flags: func(fs *flag.FlagSet) action {
			name := fs.String("name", "", "merchant name (required)")
			storeURL := fs.String("store-url", "", "the store's http(s) URL, base of referral links (required)")
			email := fs.String("email", "", "dashboard login (default owner@<store host>)")
			prefix := fs.String("code-prefix", "", "referral code prefix, 2-8 letters A-Z (default from the name)")
			return func(ctx context.Context, c conn) (any, error) {
				created, err := merchant.Register(ctx, c.merchants, &merchant.Merchant{Name: *name, StoreURL: *storeURL,
					DashboardEmail: *email, CodePrefix: *prefix})
				if apperr.Is(err, apperr.Invalid) {
					return nil, fmt.Errorf("%w: %s", errUsage, apperr.MessageOf(err))
				}
				return created, err
			}
		},
	},
	"key create": {
		about: "Issues a new API key for the merchant and prints it (shown once)",
		flags: func(fs *flag.FlagSet) action {
			id := fs.String("merchant", "", "merchant id (required)")
			return func(ctx context.Context, c conn) (any, error) {
				mid, err := merchantID(*id)
				if err != nil {
					return nil, err
				}
				plain, k, err := c.merchants.CreateKey(ctx, mid)
				if err != nil {
					return nil, err
				}
				return map[string]string{"merchant_id": mid.String(), "api_key": plain, "key_prefix": k.Prefix}, nil
			}
		},
	},
	"key revoke": {
		about: "Revokes the merchant's active keys that start with the prefix, and prints how many",
		flags: func(fs *flag.FlagSet) action {
			id := fs.String("merchant", "", "merchant id (required)")
			prefix := fs.String("key-prefix", "", "the first 8 characters of the key (required)")
			return func(ctx context.Context, c conn) (any, error) {
				mid, err := uuid.Parse(strings.TrimSpace(*id))
				p := strings.TrimSpace(*prefix)
				if err != nil || p == "" {
					return nil, fmt.Errorf("%w: --merchant ID and --key-prefix P are required", errUsage)
				}
				n, err := c.merchants.RevokeKey(ctx, mid, p)
				if err != nil {
					return nil, err
				}
				return map[string]any{"merchant_id": mid.String(), "key_prefix": *prefix, "revoked": n}, nil
			}
		},
	},
	"key list": {
		about: "Prints the merchant's API keys, revoked ones included: prefix and dates, never a key or its hash",
		flags: func(fs *flag.FlagSet) action {
			id := fs.String("merchant", "", "merchant id (required)")
			return func(ctx context.Context, c conn) (any, error) {
				mid, err := merchantID(*id)
				if err != nil {
					return nil, err
				}
				keys, err := c.merchants.ListKeys(ctx, mid)
				if err != nil {
					return nil, err
				}
				return keyList(mid, keys), nil
			}
		},
	},
	"secrets rotate": {
		about: "Re-seals every stored secret not yet under SECRETS_KEY (those under SECRETS_KEY_PREVIOUS, or of the format " +
			"before key ids) and prints the counts; safe to repeat while the programs serve",
		secrets: true,
		flags: func(fs *flag.FlagSet) action {
			batch := fs.Int("batch", 100, "rows re-sealed per transaction (1 to 10000)")
			return func(ctx context.Context, c conn) (any, error) {
				if *batch < 1 || *batch > 10000 {
					return nil, fmt.Errorf("%w: --batch must be 1 to 10000", errUsage)
				}
				rot := postgres.NewSecretsRotation(c.pool, c.box)
				rot.Batch = *batch
				done, err := rot.Rotate(ctx)
				if err == nil && done.Unreadable > 0 {
					err = fmt.Errorf("%d sealed values open with neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS (unreadable_at names them); "+
						"the others were re-sealed", done.Unreadable)
				}
				if err != nil {
					return nil, &partialError{done: done, err: err}
				}
				return done, nil
			}
		},
	},
}

// commandNames are the commands in the order the help lists them.
var commandNames = []string{"merchant create", "key create", "key revoke", "key list", "secrets rotate"}

func merchantID(s string) (uuid.UUID, error) {
	mid, err := uuid.Parse(strings.TrimSpace(s))
	if err != nil {
		return uuid.Nil, fmt.Errorf("%w: --merchant must be a merchant id", errUsage)
	}
	return mid, nil
}

// listedKey is a key as key list prints it.
type listedKey struct {
	Prefix     string  `json:"key_prefix"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at"`
	RevokedAt  *string `json:"revoked_at"`
}

func keyList(mid uuid.UUID, keys []merchant.Key) any {
	out := struct {
		MerchantID string      `json:"merchant_id"`
		Keys       []listedKey `json:"keys"`
	}{MerchantID: mid.String(), Keys: []listedKey{}}
	for _, k := range keys {
		out.Keys = append(out.Keys, listedKey{Prefix: k.Prefix, CreatedAt: jsontime.Format(k.CreatedAt),
			LastUsedAt: jsontime.Ptr(k.LastUsedAt), RevokedAt: jsontime.Ptr(k.RevokedAt)})
	}
	return out
}

// isBootstrap reports whether args name an administrative command.
func isBootstrap(args []string) bool {
	return len(args) > 0 && (args[0] == "merchant" || args[0] == "key" || args[0] == "secrets")
}

// bootstrap runs an administrative command and prints one JSON object on
// out. Asked for help (-h, --help), it prints the command's help on out
// and connects to nothing. Otherwise it checks the secrets keys (for a
// command that reads them), then reads DATABASE_URL and applies the
// migrations first, and for such a command checks that the keys open the
// database's secrets (postgres.CheckSecretsKey). An action that fails having done part of its work (a
// partialError) prints what it did before its error is returned.
func bootstrap(ctx context.Context, cfg program.Config, args []string, out io.Writer) error {
	if len(args) < 2 || program.WantsHelp(args[1:]) {
		if len(args) >= 2 {
			writeCommandsHelp(out)
			return nil
		}
		return fmt.Errorf("%w: %s", errUsage, strings.Join(commandNames, " | "))
	}
	name := args[0] + " " + args[1]
	cmd, ok := commands[name]
	if !ok {
		return fmt.Errorf("%w: unknown command %q (%s)", errUsage, name, strings.Join(commandNames, " | "))
	}
	fs := flag.NewFlagSet("api "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run := cmd.flags(fs)
	if err := fs.Parse(args[2:]); errors.Is(err, flag.ErrHelp) {
		writeCommandHelp(out, name, cmd, fs)
		return nil
	} else if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	var box *secretbox.Box
	if cmd.secrets {
		var err error
		if box, err = program.NewBox(cfg); err != nil {
			return err
		}
	}
	if err := postgres.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.Migrate(ctx, pool); err != nil {
		return err
	}
	if box != nil {
		if err := postgres.CheckSecretsKey(ctx, pool, box); err != nil {
			return err
		}
	}
	// The commands' changes (keys created and revoked) are the system's in
	// the merchants' audit trails, labelled as the command line's.
	ctx = audit.WithActor(ctx, audit.Actor{Type: audit.ActorSystem, Label: "cli"}, "")
	result, err := run(ctx, conn{pool: pool, merchants: postgres.NewMerchantStore(pool, box), box: box})
	var partial *partialError
	if errors.As(err, &partial) {
		result, err = partial.done, partial.err
		if encErr := json.NewEncoder(out).Encode(result); encErr != nil {
			return encErr
		}
		return err
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(result)
}

// partialError is the error of an action that did part of its work:
// bootstrap prints done, then returns err.
type partialError struct {
	done any
	err  error
}

func (p *partialError) Error() string { return p.err.Error() }
func (p *partialError) Unwrap() error { return p.err }

func writeCommandHelp(w io.Writer, name string, cmd command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: api %s [flags]\n\n%s. It prints one JSON object.\n\nFlags:\n", name, cmd.about)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintln(w)
	program.WriteSettings(w, settingsOf(cmd))
}

// settingsOf are the settings cmd reads: those of every command, and the
// secrets keys for a command marked secrets.
func settingsOf(cmd command) []program.Setting {
	out := program.SettingsOf(program.Bootstrap)
	if cmd.secrets {
		for _, s := range program.Settings {
			if s.Name == "SECRETS_KEY" || s.Name == "SECRETS_KEY_PREVIOUS" {
				out = append(out, s)
			}
		}
	}
	return out
}

func writeCommandsHelp(w io.Writer) {
	fmt.Fprintln(w, "Administrative commands (api COMMAND --help for each):")
	for _, name := range commandNames {
		fmt.Fprintf(w, "  api %-16s %s\n", name, commands[name].about)
	}
	fmt.Fprintln(w)
	program.WriteSettings(w, program.SettingsOf(program.Bootstrap))
}
