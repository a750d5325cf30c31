package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// -compare REF runs the sales phase against two builds of cmd/standalone,
// each a separate process on a fresh database: REF's and the working
// tree's, alternately, -rounds times each. The load generator is this
// process, so the CPU it spends is not counted: the figures are the
// service's CPU per order (the standalone process, read from /proc) and
// PostgreSQL's (the backends of the bench database), the figure that
// travels between machines, beside orders/s and the p99s.

// standaloneCommand is the command name the two builds run under, which
// procstat finds in /proc.
const standaloneCommand = "standalone"

// tree is one build under comparison.
type tree struct {
	Name   string // "REF abc1234" or "working tree"
	Binary string
}

// runCompare builds both trees and runs the rounds.
func runCompare(ctx context.Context, o options, stdout, stderr io.Writer) (bool, error) {
	work, err := os.MkdirTemp("", "convida-bench-compare-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(work)
	ref, err := buildRef(ctx, o.Compare, work, stderr)
	if err != nil {
		return false, err
	}
	head, err := buildTree(ctx, ".", filepath.Join(work, "head", standaloneCommand), stderr)
	if err != nil {
		return false, err
	}
	trees := []tree{{Name: ref.Name, Binary: ref.Binary}, {Name: "working tree", Binary: head}}
	watched = append(slices.Clone(watched), standaloneCommand)

	results := map[string][]*report{}
	pass := true
	for round := 1; round <= o.Rounds; round++ {
		for _, t := range trees {
			fmt.Fprintf(stderr, "\nround %d of %d: %s\n", round, o.Rounds, t.Name)
			rep, err := compareRun(ctx, o, t, stderr)
			if err != nil {
				return false, fmt.Errorf("%s, round %d: %w", t.Name, round, err)
			}
			rep.print(stdout)
			pass = pass && rep.pass()
			results[t.Name] = append(results[t.Name], rep)
		}
	}
	printComparison(stdout, o, trees, results)
	return pass, nil
}

// builtRef is REF built from a detached worktree.
type builtRef struct{ Name, Binary string }

// buildRef checks REF out into a temporary worktree, builds its
// cmd/standalone and removes the worktree.
func buildRef(ctx context.Context, ref, work string, stderr io.Writer) (builtRef, error) {
	sha, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", ref+"^{commit}").Output()
	if err != nil {
		return builtRef{}, fmt.Errorf("-compare %s: not a commit of this repository: %w", ref, err)
	}
	short := strings.TrimSpace(string(sha))
	dir := filepath.Join(work, "ref-src")
	if out, err := exec.CommandContext(ctx, "git", "worktree", "add", "--detach", dir, short).CombinedOutput(); err != nil {
		return builtRef{}, fmt.Errorf("git worktree add %s: %v: %s", short, err, out)
	}
	defer func() {
		_ = exec.Command("git", "worktree", "remove", "--force", dir).Run()
	}()
	bin, err := buildTree(ctx, dir, filepath.Join(work, "ref", standaloneCommand), stderr)
	return builtRef{Name: "REF " + short, Binary: bin}, err
}

// buildTree builds dir's cmd/standalone into out.
func buildTree(ctx context.Context, dir, out string, stderr io.Writer) (string, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(stderr, "building %s/cmd/standalone\n", dir)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", abs, "./cmd/standalone")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, stderr, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build in %s: %w", dir, err)
	}
	return abs, nil
}

// compareRun is one sales run against one build: a fresh database, the
// build started as its own process, a merchant seeded through its API,
// the warm-up order, then the measured orders.
func compareRun(ctx context.Context, o options, t tree, stderr io.Writer) (*report, error) {
	guard, name, err := claimDatabase(ctx, o.Database)
	if err != nil {
		return nil, err
	}
	defer guard.Close(context.Background())
	if err := resetDatabase(ctx, guard, name); err != nil {
		return nil, fmt.Errorf("reset database: %w", err)
	}
	proc, err := startStandalone(ctx, t.Binary, o)
	if err != nil {
		return nil, err
	}
	defer proc.stop(stderr)
	start := time.Now()
	s, ten, err := seedThroughAPI(ctx, proc, o)
	if err != nil {
		return nil, fmt.Errorf("seed through the API: %w (its log: %s)", err, proc.logTail())
	}
	defer s.close()
	seeding := time.Since(start)
	if err := warmUp(ctx, s, ten); err != nil {
		return nil, fmt.Errorf("%w (its log: %s)", err, proc.logTail())
	}
	rep := &report{Options: o, Seeding: seeding, Tree: t.Name}
	bodies := buildBodies(ten, o.Orders)
	if err := measure(ctx, s, ten, bodies, rep, stderr); err != nil {
		return nil, err
	}
	if rep.Verified, err = verify(ctx, s.pool, ten, rep.Load.Failed); err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	if exited := proc.exited(); exited != "" {
		rep.Verified.Problems = append(rep.Verified.Problems, "the service "+exited)
	}
	rep.RedisKeys = forgetDedupeKeys(ctx, s, ten.MerchantID)
	return rep, nil
}
