package webhook

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// ClientConfig configures a Client. The zero value is production-safe:
// public addresses only, the system's roots, the timeouts of webhooks.md.
type ClientConfig struct {
	// AllowPrivateNetworks lifts the dial-time address check and allows
	// plain http URLs (WEBHOOK_ALLOW_PRIVATE_NETWORKS, for development and
	// tests only).
	AllowPrivateNetworks bool
	// RootCAs are the roots trusted for receivers' certificates; nil means
	// the system's (LoadCAFile adds WEBHOOK_CA_FILE to them).
	RootCAs *x509.CertPool
	// Timeout bounds one attempt, from dial to the end of the body;
	// default 10 s.
	Timeout time.Duration
	// ConnectTimeout bounds the TCP connect and the TLS handshake, each;
	// default 5 s.
	ConnectTimeout time.Duration
	// MaxConnsPerHost caps the connections to one host:port, 0 for no cap.
	// It is also the number of idle connections kept per host (256 when
	// 0), so that a steady rate reuses connections instead of dialling.
	MaxConnsPerHost int
}

// The defaults of ClientConfig (webhooks.md: a 2xx within 10 s, 5 s to
// connect).
const (
	DefaultTimeout        = 10 * time.Second
	DefaultConnectTimeout = 5 * time.Second
)

// withDefaults fills in zero fields.
func (c ClientConfig) withDefaults() ClientConfig {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	return c
}

// NonPublicAddressError is the dial error for an address that is not
// publicly routable. It is returned before any packet is sent.
type NonPublicAddressError struct {
	Addr netip.Addr
}

func (e *NonPublicAddressError) Error() string {
	return "refusing to connect to non-public address " + e.Addr.String()
}

// Ranges that netip's predicates do not cover. Documentation ranges
// (192.0.2/24, 2001:db8::/32, …) are left alone: they route nowhere.
var nonPublicPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking, used inside some clouds
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, includes 255.255.255.255
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/32"),       // Teredo: tunnels to an embedded IPv4
	netip.MustParsePrefix("2002::/16"),       // 6to4: tunnels to an embedded IPv4
	netip.MustParsePrefix("::/96"),           // deprecated IPv4-compatible, ::1 and ::
	netip.MustParsePrefix("::ffff:0:0:0/96"), // SIIT IPv4-translated
}

// nat64 is the well-known NAT64 prefix: its last 32 bits are an IPv4
// address that a NAT64 gateway would reach, so that address is checked.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// IsPublicAddr reports whether a connection to addr may leave for the
// internet: not loopback, private (RFC 1918, fc00::/7), link-local
// (169.254/16 including the 169.254.169.254 metadata service, fe80::/10),
// CGNAT, multicast, unspecified, broadcast or reserved, including the
// IPv4-mapped and NAT64 forms of those.
func IsPublicAddr(addr netip.Addr) bool {
	addr = addr.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	if nat64.Contains(addr) {
		v4 := addr.As16()
		addr = netip.AddrFrom4([4]byte(v4[12:]))
	}
	if !addr.IsValid() || addr.IsLoopback() || addr.IsPrivate() || addr.IsUnspecified() ||
		addr.IsLinkLocalUnicast() || addr.IsMulticast() || addr.IsInterfaceLocalMulticast() ||
		addr.IsLinkLocalMulticast() {
		return false
	}
	for _, p := range nonPublicPrefixes {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// guardControl is a net.Dialer Control function. It runs after name
// resolution, on the socket about to connect, with the very address being
// dialled: a DNS answer that changes between a check and the dial (DNS
// rebinding) cannot slip a private address past it, and every address of a
// multi-address host is checked as it is tried.
func guardControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to connect to unparsable address %q: %w", address, err)
	}
	if !IsPublicAddr(ap.Addr()) {
		return &NonPublicAddressError{Addr: ap.Addr().WithZone("")}
	}
	return nil
}

// newDialer returns the dialer of a Client: the connect timeout, and the
// address check unless private networks are allowed.
func newDialer(cfg ClientConfig) *net.Dialer {
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivateNetworks {
		d.Control = guardControl
	}
	return d
}

// LoadCAFile returns the system's root pool plus the PEM certificates of
// the file at path (WEBHOOK_CA_FILE), so that receivers behind a private
// CA can be trusted. It fails when the file cannot be read or holds no PEM
// certificate.
func LoadCAFile(path string) (*x509.CertPool, error) {
	pemBytes, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("webhook CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool() // no system roots here: trust the file alone
	}
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("webhook CA file %s: %w", path, errNoPEM)
	}
	return pool, nil
}

var errNoPEM = errors.New("no PEM certificate found")
