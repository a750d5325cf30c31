//go:build !linux

package main

// holdTerminal does nothing off Linux (see terminal_linux.go).
func holdTerminal() (release func()) { return func() {} }
