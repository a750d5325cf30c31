package program

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/convida/convida/pkg/postgres"
)

// Role is one of the programs' main loops.
type Role func(ctx context.Context, d *Deps) error

// Main runs roles until SIGINT or SIGTERM, as the program named name, with
// the operator's server (RunOps) beside them. It is the whole body of each
// cmd/<program>/main.go: config from the environment, logger, connections,
// run, drain. An invalid setting exits 2 at once with one line; a
// dependency that does not answer is waited for (AfterStart): the
// operator's server answers from the first moment, /readyz saying what is
// missing. Asked for help (WantsHelp), it prints about and the settings the
// program reads, and returns without connecting to anything.
func Main(name, about string, roles ...Role) {
	if WantsHelp(os.Args[1:]) {
		Help(os.Stdout, name, about)
		return
	}
	if err := CheckArgs(name, os.Args[1:]); err != nil {
		Exit(name, err)
	}
	tuneGC()
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		Exit(name, err)
	}
	log, err := NewLogger(cfg.LogLevel)
	if err != nil {
		Exit(name, err)
	}
	defer log.Sync() //nolint:errcheck
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := New(cfg, log.With(zap.String("program", name)), name)
	if err != nil {
		Exit(name, err)
	}
	defer d.Close()
	ops := func(ctx context.Context, d *Deps) error { return RunOps(ctx, d, name) }
	if err := RunRoles(ctx, d, ops, AfterStart(roles...)); err != nil {
		if errors.Is(err, postgres.ErrWrongSecretsKey) {
			Exit(name, err) // one line naming SECRETS_KEY, exit 2
		}
		log.Error("stopped", zap.Error(err))
		os.Exit(1)
	}
}

// AfterStart returns a role that runs Deps.Start beside roles. Main runs
// the programs' roles through it, beside the operator's server, so that a
// program started before PostgreSQL or the brokers stays up, says so on
// /readyz, and starts its work once they answer: the consumers and the
// scheduler wait for Start (WaitStarted) before their first step, the API
// and ingest servers listen at once and answer 503 with Retry-After until
// then. An error of Start (a wrong SECRETS_KEY) stops the roles.
func AfterStart(roles ...Role) Role {
	start := func(ctx context.Context, d *Deps) error {
		if err := d.Start(ctx); err != nil {
			return err
		}
		d.Log.Info("dependencies ready; starting work")
		return nil
	}
	return func(ctx context.Context, d *Deps) error { return RunRoles(ctx, d, append([]Role{start}, roles...)...) }
}

// RunRoles runs roles until ctx ends or one fails (which stops the rest).
func RunRoles(ctx context.Context, d *Deps, roles ...Role) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, role := range roles {
		g.Go(func() error { return role(ctx, d) })
	}
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
