package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/retry"
)

// Response body limits (webhooks.md): the body is read up to maxBodyRead
// bytes, so that a short answer is drained and its connection reused, and
// kept up to maxBodyLog bytes in the delivery log.
const (
	maxBodyRead = 64 << 10
	maxBodyLog  = 1 << 10
)

// defaultIdlePerHost is the idle connections kept per host when
// MaxConnsPerHost is 0. Thousands of deliveries per second to one receiver
// need on the order of rate × latency connections; Go's default of 2 would
// close and re-dial (TCP and TLS) almost every one of them.
const defaultIdlePerHost = 256

// Client is the Sender of the dispatcher: it POSTs one signed envelope and
// classifies the answer. A Client is safe for concurrent use and meant to be
// shared: it holds one http.Transport whose keep-alive connections every
// Send reuses.
type Client struct {
	http           *http.Client
	transport      *netguard.Transport
	timeout        time.Duration
	connectTimeout time.Duration
}

var _ Sender = (*Client)(nil)

// NewClient returns a Client for cfg (zero fields take their defaults).
// Unless cfg.AllowPrivateNetworks is set, it connects only to public
// addresses and only to https URLs.
func NewClient(cfg ClientConfig) *Client {
	cfg = cfg.withDefaults()
	idlePerHost := cfg.MaxConnsPerHost
	if idlePerHost <= 0 {
		idlePerHost = defaultIdlePerHost
	}
	tr := netguard.NewTransport(netguard.Config{AllowPrivateNetworks: cfg.AllowPrivateNetworks, RootCAs: cfg.RootCAs,
		ConnectTimeout: cfg.ConnectTimeout, MaxConnsPerHost: cfg.MaxConnsPerHost, IdleConnsPerHost: idlePerHost})
	return &Client{
		http: &http.Client{
			Transport: tr,
			// A 3xx is a failure: following it would let a public receiver
			// bounce the signed request to an address nobody checked at
			// registration, and the merchant must fix the URL anyway.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		transport:      tr,
		timeout:        cfg.Timeout,
		connectTimeout: cfg.ConnectTimeout,
	}
}

// CloseIdleConnections closes the kept-alive connections that are idle, as
// at shutdown. The Client stays usable.
func (c *Client) CloseIdleConnections() { c.transport.CloseIdleConnections() }

// Send makes one attempt of d: a POST of d.Payload to d.URL, signed with
// d.Secrets (SignHeaders) at the current time. It never returns an error:
// every outcome is a Result. Success means a 2xx within the timeout; Gone
// means 410; RetryAfter is set from a 429 or 503's Retry-After; Error says
// what went wrong (it never contains a secret); Duration covers the whole
// attempt. Repeating a Send repeats the delivery (receivers deduplicate by
// webhook-id).
func (c *Client) Send(ctx context.Context, d Delivery) Result {
	start := time.Now()
	res := c.send(ctx, d, start)
	res.Duration = time.Since(start)
	return res
}

func (c *Client) send(parent context.Context, d Delivery, now time.Time) Result {
	ctx, cancel := context.WithTimeout(parent, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Payload))
	if err != nil {
		return Result{Error: "invalid URL: " + errorText(err)}
	}
	err = SignHeaders(req.Header, d.Secrets, ids.Format(ids.Event, d.EventID), d.EventType,
		ids.Format(ids.DeliveryLog, d.LogID), now, d.Payload)
	if err != nil {
		return Result{Error: "signing: " + err.Error()}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Result{Error: c.describe(parent, ctx, req.URL.Host, err)}
	}
	defer resp.Body.Close()
	res := Result{StatusCode: resp.StatusCode}
	var readErr error
	res.Body, readErr = readBody(resp.Body)
	classify(&res, resp, time.Now())
	if readErr != nil && !res.Success {
		res.Error += "; reading the body: " + c.describe(parent, ctx, req.URL.Host, readErr)
	}
	return res
}

// classify sets the outcome of an answered attempt. A 2xx is a success even
// if its body then fails to arrive: the receiver has decided, and a retry
// would only deliver a duplicate.
func classify(res *Result, resp *http.Response, now time.Time) {
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		res.Success = true
	case code >= 300 && code < 400:
		res.Error = "redirects are not followed: " + strconv.Itoa(code)
	case code == http.StatusGone:
		res.Gone = true
		res.Error = DisabledGone
	default:
		res.Error = "status " + strconv.Itoa(code) + " " + http.StatusText(code)
		if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
			res.RetryAfter = retry.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
			if res.RetryAfter > 0 {
				res.Error += " (Retry-After " + res.RetryAfter.String() + ")"
			}
		}
	}
}

// readBody drains up to maxBodyRead bytes and returns the first maxBodyLog
// of them as valid UTF-8 (invalid bytes become U+FFFD; a rune cut by the
// limit is dropped). Only the logged part is buffered: the rest goes to
// io.Discard, whose buffers are pooled.
func readBody(body io.Reader) (string, error) {
	head := make([]byte, maxBodyLog)
	n, err := io.ReadFull(body, head)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		err = nil // a body shorter than maxBodyLog
	case err == nil:
		_, err = io.CopyN(io.Discard, body, maxBodyRead-maxBodyLog)
		if err == io.EOF {
			err = nil
		}
	}
	s := strings.ToValidUTF8(string(head[:n]), "\uFFFD")
	if len(s) > maxBodyLog {
		cut := maxBodyLog
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s, err
}

// NoPublicAddress is the delivery log's sentence for an endpoint whose
// host does not resolve, or resolves only to addresses that are not
// public: the same for both, and without the host.
const NoPublicAddress = "refused: " + netguard.NoPublicAddress

// describe turns a transport error into a sentence for the delivery log.
// parent is the caller's context (ended at shutdown), ctx the attempt's
// (ended by the timeout).
func (c *Client) describe(parent, ctx context.Context, host string, err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	switch {
	case errors.Is(err, netguard.ErrNotPublic):
		return NoPublicAddress
	case errors.Is(err, netguard.ErrNotHTTPS):
		return "refused: " + netguard.Describe(parent, err)
	case parent.Err() != nil:
		return "canceled before an answer: " + parent.Err().Error()
	case ctx.Err() != nil:
		return "timeout: no complete answer within " + c.timeout.String()
	case errors.As(err, &dnsErr):
		// One sentence for a name that does not resolve (or whose lookup
		// fails) and one that resolves to an address that is not public,
		// naming neither the host nor the address: told apart, they would
		// let a merchant ask the operator's DNS which internal names exist
		// (issue 29).
		return NoPublicAddress
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused by " + host
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by " + host
	case errors.As(err, &hostErr):
		return "TLS: certificate is not valid for " + hostErr.Host
	case errors.As(err, &certErr):
		return "TLS: certificate not trusted: " + errorText(certErr.Err)
	case errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("timeout: could not connect to %s within %s", host, c.connectTimeout)
	}
	return errorText(err)
}

// errorText drops the "Post \"https://…\": " that url.Error prefixes: the
// log record already names the endpoint.
func errorText(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err.Error()
	}
	return err.Error()
}
