// Package netguard is the one way Convida calls an address a merchant gave
// it: webhook receivers and the platforms' API URLs alike. A client built
// here connects only to public addresses, checked at dial time on the very
// address being dialled; it speaks https only, follows no redirect and
// ignores the proxy of the environment. Config.AllowPrivateNetworks lifts
// the address check and allows plain http, for development and tests that
// run their receivers and fake platforms on loopback.
//
// What a merchant is told of a refusal is ErrNotPublic's sentence, "the
// address is not public": never the address, which would make Convida a
// scanner of the operator's network.
package netguard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrNotPublic is what a refused address is to the caller: errors.Is
// finds it in the error of a dial, a request or CheckURL. Its text is the
// whole of what a merchant may be shown.
var ErrNotPublic = errors.New("the address is not public")

// NoPublicAddress is Describe's sentence for a dial refused because the
// host's address is not public and for a host whose name does not
// resolve, or whose lookup fails: the same words for both, naming neither
// the host nor the address.
const NoPublicAddress = "the host has no public address"

// ErrNotHTTPS is the error of a request to a plain http URL while private
// networks are not allowed.
var ErrNotHTTPS = errors.New("only https URLs are allowed")

// NonPublicAddressError is the dial error for an address that is not
// publicly routable. It is returned before any packet is sent. Its Error
// is ErrNotPublic's text; Addr is for the operator's log only.
type NonPublicAddressError struct {
	Addr netip.Addr
}

func (e *NonPublicAddressError) Error() string { return ErrNotPublic.Error() }

// Is makes errors.Is(err, ErrNotPublic) true.
func (e *NonPublicAddressError) Is(target error) bool { return target == ErrNotPublic }

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
func guardControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to connect to an unparsable address: %w", ErrNotPublic)
	}
	if !IsPublicAddr(ap.Addr()) {
		return &NonPublicAddressError{Addr: ap.Addr().WithZone("")}
	}
	return nil
}

// Config configures NewTransport and NewClient. The zero value is
// production-safe: public addresses and https only, the system's roots,
// a 5 s connect timeout.
type Config struct {
	// AllowPrivateNetworks lifts the dial-time address check and allows
	// plain http URLs (WEBHOOK_ALLOW_PRIVATE_NETWORKS,
	// PLATFORM_ALLOW_PRIVATE_NETWORKS: development and tests only).
	AllowPrivateNetworks bool
	// RootCAs are the roots trusted for servers' certificates; nil means
	// the system's.
	RootCAs *x509.CertPool
	// ConnectTimeout bounds the TCP connect and the TLS handshake, each;
	// default 5 s.
	ConnectTimeout time.Duration
	// MaxConnsPerHost caps the connections to one host:port, 0 for no cap.
	MaxConnsPerHost int
	// IdleConnsPerHost is the idle connections kept per host (default 64),
	// so that a steady rate reuses connections instead of dialling.
	IdleConnsPerHost int
}

// DefaultConnectTimeout is Config.ConnectTimeout's default.
const DefaultConnectTimeout = 5 * time.Second

// NewTransport returns a transport whose every connection goes through the
// guarded dialer (unless cfg.AllowPrivateNetworks), with no proxy, TLS 1.2
// or later, and which refuses a plain http request unless
// cfg.AllowPrivateNetworks.
func NewTransport(cfg Config) *Transport {
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.IdleConnsPerHost <= 0 {
		cfg.IdleConnsPerHost = 64
	}
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivateNetworks {
		d.Control = guardControl
	}
	tr := &http.Transport{
		// No proxy, whatever the environment says: the address check must
		// see the server's address, not a proxy's.
		Proxy:               nil,
		DialContext:         d.DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: cfg.ConnectTimeout,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: cfg.IdleConnsPerHost,
		MaxConnsPerHost:     cfg.MaxConnsPerHost,
		IdleConnTimeout:     90 * time.Second,
		// Headers are small; a server must not make us buffer megabytes.
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &Transport{base: tr, allowHTTP: cfg.AllowPrivateNetworks}
}

// Transport is the guarded http.RoundTripper.
type Transport struct {
	base      *http.Transport
	allowHTTP bool
}

// RoundTrip sends req when its scheme is allowed.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" && !(t.allowHTTP && req.URL.Scheme == "http") {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, ErrNotHTTPS
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections closes the kept-alive connections that are idle.
func (t *Transport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// NewClient returns a client over NewTransport(cfg) that follows no
// redirect: a 3xx is the answer. Following one would let a public server
// bounce a request, and the credentials it carries, to an address nobody
// checked. timeout bounds a whole exchange (0: none; callers then bound it
// with their context).
func NewClient(cfg Config, timeout time.Duration) *http.Client {
	return &http.Client{
		Transport:     NewTransport(cfg),
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// CheckURL checks, before anything is stored or sent, that raw is an
// absolute URL Convida may call: https (or http when allowPrivate), with a
// host that is neither a non-public IP literal nor a name for the local
// machine (localhost, *.localhost, and the single-label names a private
// resolver answers). The dial-time check remains the guarantee: a public
// name may resolve to a private address later. The error wraps
// ErrNotPublic or ErrNotHTTPS, or says the URL is malformed; it never
// repeats the address.
// URLChecker is CheckURL with allowPrivate fixed: the check of a URL a
// caller will have the guarded client call (merchant.URLCheck).
func URLChecker(allowPrivate bool) func(raw string) error {
	return func(raw string) error { return CheckURL(raw, allowPrivate) }
}

func CheckURL(raw string, allowPrivate bool) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" || u.Opaque != "" || u.Hostname() == "" {
		return errors.New("must be an absolute URL with a host")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	case u.Scheme == "http":
		return ErrNotHTTPS
	default:
		return errors.New("must be an https URL")
	}
	if allowPrivate {
		return nil
	}
	if !publicHost(u.Hostname()) {
		return ErrNotPublic
	}
	return nil
}

// publicHost reports whether host may name a public server: an IP literal
// must be public; a name must have a dot, not be localhost, and not be one
// of the numeric forms that resolvers read as IPv4 (2130706433, 0x7f.1,
// 127.1), which are refused rather than interpreted.
func publicHost(host string) bool {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return IsPublicAddr(a)
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || !strings.Contains(h, ".") {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if !numericLabel(label) {
			return true
		}
	}
	return false
}

// numericLabel reports whether label is decimal digits or 0x and hex
// digits.
func numericLabel(label string) bool {
	digits := "0123456789"
	if rest, ok := strings.CutPrefix(label, "0x"); ok {
		label, digits = rest, "0123456789abcdef"
	}
	return strings.Trim(label, digits) == ""
}

// Describe turns a transport error into a short sentence for a merchant:
// what went wrong, never the address it went wrong with. ctx is the
// caller's, so its end is told apart from a timeout of the exchange.
func Describe(ctx context.Context, err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	switch {
	case errors.Is(err, ErrNotPublic):
		return NoPublicAddress
	case errors.Is(err, ErrNotHTTPS):
		return ErrNotHTTPS.Error()
	case ctx != nil && ctx.Err() != nil:
		return "canceled before an answer: " + ctx.Err().Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout: no complete answer in time"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &dnsErr):
		// One sentence with a host that resolves only to addresses that
		// are not public: told apart, they would let a merchant ask the
		// operator's DNS which internal names exist.
		return NoPublicAddress
	case errors.As(err, &hostErr):
		return "TLS: the certificate is not valid for the host"
	case errors.As(err, &certErr):
		return "TLS: the certificate is not trusted"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timeout: could not connect in time"
	}
	return "the connection failed"
}
