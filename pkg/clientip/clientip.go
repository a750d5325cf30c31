// Package clientip tells who sent a request: the connection's peer, or,
// only when that peer is one of the operator's proxies (TRUSTED_PROXIES),
// the address the proxies say they received it from. Every limit that
// counts clients — the dashboard's sign-in throttle, the creator
// operations' per-address limit, the failed-authentication limits of the
// API and the ingest — and the access log use it, so none of them can be
// dodged with a forged header or collapsed into one count behind a load
// balancer.
package clientip

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Resolver finds a request's client address. Its zero value trusts no
// proxy: the peer is the client.
type Resolver struct {
	trusted []netip.Prefix
}

// Parse reads TRUSTED_PROXIES: comma-separated CIDRs or single addresses
// (10.0.0.0/8, 192.168.1.7, fd00::/8). Empty trusts nothing.
func Parse(list string) (Resolver, error) {
	var r Resolver
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			a, err := netip.ParseAddr(part)
			if err != nil {
				return Resolver{}, fmt.Errorf("%q is neither a CIDR nor an address", part)
			}
			a = a.Unmap()
			part = netip.PrefixFrom(a, a.BitLen()).String()
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return Resolver{}, fmt.Errorf("%q is not a CIDR: %w", part, err)
		}
		r.trusted = append(r.trusted, unmapPrefix(p.Masked()))
	}
	return r, nil
}

// MustParse is Parse for tests and constants; it panics on an error.
func MustParse(list string) Resolver {
	r, err := Parse(list)
	if err != nil {
		panic(err)
	}
	return r
}

func unmapPrefix(p netip.Prefix) netip.Prefix {
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p
}

// Trusts reports whether a is one of the operator's proxies.
func (r Resolver) Trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Addr is the client's address of req. The peer (RemoteAddr) is the client
// unless it is a trusted proxy; then X-Forwarded-For is read from the
// right, each hop a trusted proxy appended, and the first address that is
// not a trusted proxy is the client (one a client wrote itself, further
// left, is never reached). A malformed hop ends the walk at the last
// trusted one. The zero Addr means RemoteAddr was not an address (a test
// server's pipe).
func (r Resolver) Addr(req *http.Request) netip.Addr {
	peer := peerAddr(req.RemoteAddr)
	if !peer.IsValid() || !r.Trusts(peer) {
		return peer
	}
	client := peer
	hops := req.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return client
			}
			client = a.Unmap().WithZone("")
			if !r.Trusts(client) {
				return client
			}
		}
	}
	return client
}

// Key is the client of req as a limit counts it: an IPv4 address as
// itself, an IPv6 address by its /64, the block one subscriber holds, so
// that a client cannot get a fresh allowance from each of its 2⁶⁴
// addresses.
func (r Resolver) Key(req *http.Request) string { return KeyOf(r.Addr(req)) }

// KeyOf is Key's rule for an address: IPv4 as itself, IPv6 as its /64,
// "unknown" for the zero Addr.
func KeyOf(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "unknown"
	case a.Is4():
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// String is the client of req for a log line: the address itself.
func (r Resolver) String(req *http.Request) string {
	a := r.Addr(req)
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func peerAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}
