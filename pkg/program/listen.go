package program

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// listeners are the sockets of the standalone's three servers, bound by
// bind before anything else starts: a taken port then stops the program at
// once with one line naming the setting to change, instead of after its
// banner said it runs, and every URL the banner prints is already open.
type listeners struct {
	API, Ingest, Ops net.Listener
}

// bind listens on HTTP_ADDR, INGEST_ADDR and METRICS_ADDR. An address it
// cannot listen on is an error of one line naming its setting (listen),
// and then none of the three is left open.
func bind(cfg Config) (*listeners, error) {
	ls := &listeners{}
	binds := []struct {
		setting, addr string
		l             *net.Listener
	}{
		{"HTTP_ADDR", cfg.HTTPAddr, &ls.API},
		{"INGEST_ADDR", cfg.IngestAddr, &ls.Ingest},
		{"METRICS_ADDR", cfg.MetricsAddr, &ls.Ops},
	}
	for i, b := range binds {
		for _, prev := range binds[:i] {
			if prev.addr == b.addr && port(b.addr) != "0" {
				ls.Close()
				return nil, fmt.Errorf("%s and %s are both %s: give each its own address", prev.setting, b.setting, b.addr)
			}
		}
		l, err := listen(b.setting, b.addr)
		if err != nil {
			ls.Close()
			return nil, err
		}
		*b.l = l
	}
	return ls, nil
}

// Close closes the listeners still open; the servers close theirs when
// they stop, so it is safe after them.
func (ls *listeners) Close() {
	for _, l := range []net.Listener{ls.API, ls.Ingest, ls.Ops} {
		if l != nil {
			_ = l.Close()
		}
	}
}

// runAPI, runIngest and runOps are the roles of the three servers, each
// on its listener.
func (ls *listeners) runAPI(ctx context.Context, d *Deps) error {
	a := NewAPI(d)
	a.Listener = ls.API
	return a.Run(ctx)
}

func (ls *listeners) runIngest(ctx context.Context, d *Deps) error {
	in := NewIngest(d)
	in.Listener = ls.Ingest
	return in.Run(ctx)
}

func (ls *listeners) runOps(ctx context.Context, d *Deps) error {
	return serveOn(ctx, d.Log, "standalone-ops", ls.Ops, d.OpsRouter())
}

// listen listens on addr, the value of setting. A taken port is an error
// that names the setting and an address to try instead; any other error
// names the setting too.
func listen(setting, addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	switch {
	case err == nil:
		return l, nil
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("%s: %s is already in use by another process (another make run?): stop it, or set %s to a free address%s",
			setting, addr, setting, tryInstead(setting, addr))
	default:
		return nil, fmt.Errorf("%s: cannot listen on %s: %w", setting, addr, err)
	}
}

// listenUnlessBound returns l when it is set, else listens on addr.
func listenUnlessBound(l net.Listener, setting, addr string) (net.Listener, error) {
	if l != nil {
		return l, nil
	}
	return listen(setting, addr)
}

// tryInstead suggests the address 10000 ports up: ", e.g.
// HTTP_ADDR=:18080"; nothing when there is no such port.
func tryInstead(setting, addr string) string {
	host, p, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(p)
	if err != nil || perr != nil || n+10000 > 65535 {
		return ""
	}
	return fmt.Sprintf(", e.g. %s=%s", setting, net.JoinHostPort(host, strconv.Itoa(n+10000)))
}

// port is the port of addr, "" when it has none.
func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
