package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// holdTerminal makes the program the foreground process group of the
// terminal it was started in the foreground of by another program (make
// run): Ctrl-C then reaches the standalone alone, which stops cleanly and
// exits 0, so make ends with 0 too instead of dying of the signal it would
// otherwise have received beside it. Started by a shell (its own group
// already), in the background or without a terminal, it does nothing. The
// function it returns gives the terminal back.
func holdTerminal() (release func()) {
	noop := func() {}
	fd := int(os.Stdin.Fd())
	foreground, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	group := unix.Getpgrp()
	if err != nil || foreground != group || group == unix.Getpid() {
		return noop
	}
	// Setting the terminal's group from a group that is not (yet) its
	// foreground raises SIGTTOU, which would stop the process. Ctrl-Z is
	// ignored too: stopped in a group of its own, the program would hold
	// the terminal while make, not stopped, keeps the shell waiting.
	signal.Ignore(syscall.SIGTTOU, syscall.SIGTSTP)
	if err := unix.Setpgid(0, 0); err != nil {
		return noop
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpid()); err != nil {
		_ = unix.Setpgid(0, group)
		return noop
	}
	return func() { _ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, group) }
}
