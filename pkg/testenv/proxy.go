package testenv

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP proxy on a loopback port in front of a server, for a
// test that takes the server away and brings it back without touching it
// (the shared PostgreSQL serves every other test): Cut is the server
// stopping, Restore its return on the same address.
type Proxy struct {
	tb     testing.TB
	target string
	addr   string

	mu    sync.Mutex
	l     net.Listener // nil while cut
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup // the accept loop and the copies
}

// StartProxy listens on a free loopback port and forwards every
// connection to target (host:port); it is closed at cleanup.
func StartProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testenv: proxy: %v", err)
	}
	p := &Proxy{tb: tb, target: target, addr: l.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(l)
	tb.Cleanup(func() {
		p.Cut()
		p.wg.Wait()
	})
	return p
}

// MustPostgresProxy returns the URL of a fresh database (MustDatabase)
// reached through a Proxy, and the Proxy.
func MustPostgresProxy(tb testing.TB) (string, *Proxy) {
	tb.Helper()
	return PostgresProxy(tb, MustDatabase(tb))
}

// PostgresProxy puts a Proxy in front of the server of the database URL
// databaseURL and returns the URL through it.
func PostgresProxy(tb testing.TB, databaseURL string) (string, *Proxy) {
	tb.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	p := StartProxy(tb, u.Host)
	u.Host = p.Addr()
	return u.String(), p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// Cut closes the port and every connection through it, as a server that
// stopped: a client's open connections break, new ones are refused. It
// returns once no byte passes.
func (p *Proxy) Cut() {
	p.mu.Lock()
	l := p.l
	p.l = nil
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	if l != nil {
		_ = l.Close()
	}
}

// Restore listens on the proxy's address again, as the server back.
func (p *Proxy) Restore() {
	p.tb.Helper()
	p.mu.Lock()
	up := p.l != nil
	p.mu.Unlock()
	if up {
		return
	}
	var l net.Listener
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if l, err = net.Listen("tcp", p.addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		p.tb.Fatalf("testenv: proxy: listen on %s again: %v", p.addr, err)
	}
	p.serve(l)
}

func (p *Proxy) serve(l net.Listener) {
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return // closed by Cut
			}
			p.forward(c)
		}
	}()
}

// forward connects c to the target and copies both ways until either
// side closes or Cut closes both.
func (p *Proxy) forward(c net.Conn) {
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.l == nil { // cut meanwhile
		p.mu.Unlock()
		_ = c.Close()
		_ = s.Close()
		return
	}
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := func() {
		p.mu.Lock()
		delete(p.conns, c)
		delete(p.conns, s)
		p.mu.Unlock()
		_ = c.Close()
		_ = s.Close()
	}
	var once sync.Once
	p.wg.Add(2)
	for _, pair := range [][2]net.Conn{{s, c}, {c, s}} {
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(pair[0], pair[1]) // ends when either side closes, or Cut
			once.Do(done)
		}()
	}
}
