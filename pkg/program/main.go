package program

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// Role is one of the programs' main loops.
type Role func(ctx context.Context, d *Deps) error

// Main runs roles until SIGINT or SIGTERM, as the program named name, with
// the operator's server (RunOps) beside them. It is the whole body of each
// cmd/<program>/main.go: config from the environment, logger, connections,
// run, drain. Invalid configuration or a
// failed start exits 2 with one line. Asked for help (WantsHelp), it
// prints about and the settings the program reads, and returns without
// connecting to anything.
func Main(name, about string, roles ...Role) {
	if WantsHelp(os.Args[1:]) {
		Help(os.Stdout, name, about)
		return
	}
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
	d, err := Open(ctx, cfg, log.With(zap.String("program", name)), name)
	if err != nil {
		Exit(name, err)
	}
	defer d.Close()
	ops := func(ctx context.Context, d *Deps) error { return RunOps(ctx, d, name) }
	if err := RunRoles(ctx, d, append(roles, ops)...); err != nil {
		log.Error("stopped", zap.Error(err))
		os.Exit(1)
	}
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
