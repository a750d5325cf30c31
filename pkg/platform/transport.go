// Package platform holds the clients of the sales platforms' APIs: Digital
// Manager Guru, Yampi, Hotmart and Kiwify. It knows their URLs, headers,
// bodies and answers, and nothing of Convida's rules: redemption decides
// what a coupon or a discount is, and calls these clients to put it there;
// reconciliation reads the platforms' sales through them.
//
// Every request goes through one Client, which gives them all the same
// manners: the guarded dialer (netguard: public https addresses only, no
// redirect followed), a bound on each exchange, at most one identical
// request in flight per account (the platforms refuse or double-count
// concurrent twins; Guru answers them 429; the exchange ends when its last
// caller has gone), answers read up to a bound and
// described to the merchant without a credential or an address, and — for
// the reads of the pulls — retries that wait as long as a 429 or 503's
// Retry-After asks, within a bound.
package platform

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/retry"
)

const (
	// DefaultTimeout bounds one exchange when Client.Timeout is zero.
	DefaultTimeout = 10 * time.Second
	// DefaultAttempts is how often a read of a pull is tried when
	// Client.Attempts is zero.
	DefaultAttempts = 4
	// DefaultMaxWait bounds one pause of a pull when Client.MaxWait is zero.
	DefaultMaxWait = time.Minute

	// maxAnswer bounds how much of a platform's answer to a write is read.
	maxAnswer = 64 << 10
	// maxPage bounds how much of one page of a list is read.
	maxPage = 8 << 20
	// maxExcerpt bounds how much of an answer an error message repeats.
	maxExcerpt = 200
)

// Client sends the requests of every platform. Its zero value is ready;
// it must not be copied after its first use, and is safe for concurrent
// use. One Client per process lets identical requests meet.
type Client struct {
	// HTTP sends the requests; nil means a netguard client with private
	// networks refused, never a plain one: the API URL is the merchant's
	// to choose and must not reach the operator's network. Redirects are
	// never followed (a 3xx is a refusal), so that a merchant's
	// credentials never travel to another host.
	HTTP *http.Client
	// Timeout bounds each exchange; zero means DefaultTimeout.
	Timeout time.Duration
	// Attempts is how many times a read of a pull is tried in all when it
	// fails transiently (429, 5xx, network); zero means DefaultAttempts.
	Attempts int
	// MaxWait bounds one pause between those tries, whatever a Retry-After
	// asks; zero means DefaultMaxWait.
	MaxWait time.Duration
	// Sleep waits d or until ctx ends; nil means retry.Sleep. Tests record
	// the pauses with it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock of the token caches; nil means time.Now.
	Now func() time.Time

	once   sync.Once
	http   *http.Client
	flight flight
	tokens tokenCache
}

// guardedClient is the client of a Client without one: public https
// addresses only. It is shared, so that its connections are reused.
var guardedClient = sync.OnceValue(func() *http.Client { return netguard.NewClient(netguard.Config{}, 0) })

func (c *Client) init() {
	c.once.Do(func() {
		hc := *guardedClient()
		if c.HTTP != nil {
			hc = *c.HTTP
		}
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		c.http = &hc
	})
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	return retry.Sleep(ctx, d)
}

// TransientError is a failure worth another try: a 5xx, a 429 or a network
// error. Msg is fit for a merchant; Cause is not shown.
// It is a retry.Transient: the domain retries by that behaviour.
type TransientError struct {
	Msg   string
	Wait  time.Duration // the platform's Retry-After; zero when it did not say
	Cause error
}

func (e *TransientError) Error() string { return e.Msg }
func (e *TransientError) Unwrap() error { return e.Cause }

// RetryAfter is the Retry-After the platform sent, zero when none.
func (e *TransientError) RetryAfter() time.Duration { return e.Wait }

// endpoint is one account at one platform's API: the base URL and the
// headers every request carries.
type endpoint struct {
	c       *Client
	name    string      // provider.Guru, provider.Yampi, …: the start of every message
	base    string      // without a trailing slash
	header  http.Header // credentials, Accept, Idempotency-Key
	secrets []string    // blanked out of any excerpt
}

// endpoint checks rawURL (defaultURL when blank) and returns the account's
// endpoint; secrets are the credentials its messages must never repeat.
func (c *Client) endpoint(name, rawURL, defaultURL string, secrets ...string) (*endpoint, error) {
	c.init()
	if strings.TrimSpace(rawURL) == "" {
		rawURL = defaultURL
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, apperr.Errorf(apperr.Unprocessable, "the %s api url is not an http(s) URL without query", name)
	}
	e := &endpoint{c: c, name: name, base: strings.TrimRight(u.String(), "/"), header: http.Header{}}
	e.header.Set("Accept", "application/json")
	e.secrets = spellings(secrets...)
	return e, nil
}

// withHeader is a copy of e that also sends key: value.
func (e *endpoint) withHeader(key, value string) *endpoint {
	cp := *e
	cp.header = e.header.Clone()
	cp.header.Set(key, value)
	return &cp
}

// withBearer is a copy of e that sends the access token tok, and never
// repeats it.
func (e *endpoint) withBearer(tok string) *endpoint {
	cp := e.withHeader("Authorization", "Bearer "+tok)
	cp.secrets = append(append([]string(nil), e.secrets...), spellings(tok)...)
	return cp
}

// request is one exchange: path is already escaped; payload, when not nil,
// goes as JSON, form as a url-encoded body.
type request struct {
	step    string // "GET subscription": how messages name it
	method  string
	path    string
	query   url.Values
	payload any
	form    url.Values
	limit   int64 // bytes of the answer read; 0 means maxAnswer
}

// reply is a platform's answer, its body read up to the request's limit.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// send makes one exchange. A network error, a timeout or a body cut short
// is a *TransientError; any status is a reply. An identical request of the
// same account already in flight is not sent again: its answer is shared.
func (e *endpoint) send(ctx context.Context, r request) (reply, error) {
	var body []byte
	contentType := ""
	switch {
	case r.payload != nil:
		b, err := json.Marshal(r.payload)
		if err != nil {
			return reply{}, apperr.Wrap(apperr.Internal, err, e.name+" "+r.step+": cannot encode the request")
		}
		body, contentType = b, "application/json"
	case r.form != nil:
		body, contentType = []byte(r.form.Encode()), "application/x-www-form-urlencoded"
	}
	target := e.base + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	if _, err := url.Parse(target); err != nil {
		return reply{}, apperr.Wrap(apperr.Unprocessable, quiet{err}, e.name+" "+r.step+": cannot build the request URL")
	}
	if err := ctx.Err(); err != nil {
		return reply{}, e.networkError(ctx, r.step, err)
	}
	// Callers of the same request share one exchange, which ends when
	// they have all gone.
	rep, err := e.c.flight.do(ctx, e.flightKey(r.method, target, body), func(fctx context.Context) (reply, error) {
		return e.exchange(fctx, r, target, body, contentType)
	})
	var t *TransientError
	if err != nil && ctx.Err() != nil && (errors.Is(err, ctx.Err()) || errors.As(err, &t)) {
		return reply{}, e.networkError(ctx, r.step, ctx.Err())
	}
	return rep, err
}

// flightKey identifies a request of this account: two requests share it
// only when everything sent is the same. Credentials enter as a digest.
func (e *endpoint) flightKey(method, target string, body []byte) string {
	h := sha256.New()
	keys := make([]string, 0, len(e.header))
	for k := range e.header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s:%q\n", k, e.header[k])
	}
	fmt.Fprintf(h, "%s %s\n", method, target)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func (e *endpoint) exchange(ctx context.Context, r request, target string, body []byte, contentType string) (reply, error) {
	reqCtx, cancel := context.WithTimeout(ctx, e.c.timeout())
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(reqCtx, r.method, target, rd)
	if err != nil {
		return reply{}, apperr.Wrap(apperr.Unprocessable, quiet{err}, e.name+" "+r.step+": cannot build the request URL")
	}
	for k, vs := range e.header {
		req.Header[k] = vs
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.c.http.Do(req)
	if err != nil {
		return reply{}, e.failed(ctx, r.step, err)
	}
	defer resp.Body.Close()
	limit := r.limit
	if limit <= 0 {
		limit = maxAnswer
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return reply{}, e.networkError(ctx, r.step, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// fetch is send and check, retried on a transient failure up to the
// client's Attempts, each pause as long as the platform's Retry-After
// (or a backoff when it sent none) and at most MaxWait: the reads of the
// pulls. A failure past the tries is apperr.Unavailable wrapping the last
// *TransientError, so that its Retry-After stays readable.
func (e *endpoint) fetch(ctx context.Context, r request) (reply, error) {
	attempts := e.c.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	maxWait := e.c.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	backoff := retry.Backoff{Base: time.Second, Max: maxWait}
	for tried := 1; ; tried++ {
		rep, err := e.send(ctx, r)
		if err == nil {
			err = e.check(r.step, rep)
		}
		var t *TransientError
		if err == nil || !errors.As(err, &t) {
			return rep, err
		}
		if tried >= attempts || ctx.Err() != nil {
			return reply{}, apperr.Wrap(apperr.Unavailable, t, fmt.Sprintf("%s (gave up after %d attempts)", t.Msg, tried))
		}
		pause := backoff.Next()
		if t.Wait > 0 {
			pause = min(t.Wait, maxWait)
		}
		if err := e.c.sleep(ctx, pause); err != nil {
			return reply{}, apperr.Wrap(apperr.Unavailable, t, t.Msg+"; stopped: "+err.Error())
		}
	}
}

// getJSON fetches r and decodes its answer into v; an answer that is not
// the expected JSON is Unprocessable, with an excerpt.
func (e *endpoint) getJSON(ctx context.Context, r request, v any) error {
	if r.limit == 0 {
		r.limit = maxPage
	}
	if r.method == "" {
		r.method = http.MethodGet
	}
	rep, err := e.fetch(ctx, r)
	if err != nil {
		return err
	}
	if int64(len(rep.body)) >= r.limit {
		return apperr.Errorf(apperr.Unprocessable, "%s %s answered more than %d bytes", e.name, r.step, r.limit)
	}
	d := json.NewDecoder(bytes.NewReader(rep.body))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return apperr.Errorf(apperr.Unprocessable, "%s %s answered %d with an unexpected body: %s", e.name, r.step, rep.status, e.excerpt(rep.body))
	}
	return nil
}
