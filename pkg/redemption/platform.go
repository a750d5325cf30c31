package redemption

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/retry"
)

const (
	// maxAnswer bounds how much of a platform's answer is read.
	maxAnswer = 64 << 10
	// maxExcerpt bounds how much of it an error message repeats.
	maxExcerpt = 200
)

// transientError is a failure worth another attempt: a 5xx, a 429 or a
// network error. msg is caller-safe; cause is not shown.
type transientError struct {
	msg        string
	retryAfter time.Duration // zero when the platform did not say
	cause      error
}

func (e *transientError) Error() string { return e.msg }
func (e *transientError) Unwrap() error { return e.cause }

// platform sends the requests of one redemption to one platform.
type platform struct {
	name    string      // "guru" or "yampi", for messages
	base    string      // the API URL without a trailing slash
	header  http.Header // sent on every request: credentials, Accept, Idempotency-Key
	secrets []string    // credentials to blank out of any excerpt
	client  *http.Client
	timeout time.Duration
}

// reply is a platform's answer, its body read up to maxAnswer bytes.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// send makes one request to base+path (path already escaped) with the JSON
// of payload, when not nil, as its body. A network error, a timeout or a
// body cut short is a *transientError; any status is a reply.
func (p *platform) send(ctx context.Context, step, method, path string, query url.Values, payload any) (reply, error) {
	var body io.Reader
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			return reply{}, apperr.Wrap(apperr.Internal, err, p.name+" "+step+": cannot encode the request")
		}
		body = bytes.NewReader(b)
	}
	target := p.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	reqCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, method, target, body)
	if err != nil {
		return reply{}, apperr.Wrap(apperr.Unprocessable, err, p.name+" "+step+": cannot build the request URL")
	}
	for k, vs := range p.header {
		req.Header[k] = vs
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.client.Do(req)
	if errors.Is(err, netguard.ErrNotPublic) || errors.Is(err, netguard.ErrNotHTTPS) {
		// A refused address stays refused: the merchant must change the
		// API URL, so the redemption fails now rather than after retries.
		return reply{}, apperr.Wrap(apperr.Unprocessable, err, p.name+" "+step+": "+netguard.Describe(ctx, err))
	}
	if err != nil {
		return reply{}, p.networkError(ctx, step, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return reply{}, p.networkError(ctx, step, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// networkError describes a failed exchange in netguard.Describe's words:
// what went wrong, never the URL, the address or the dialler's error,
// which would tell a merchant about the operator's network. ctx is the
// caller's: its end is told apart from the per-request timeout.
func (p *platform) networkError(ctx context.Context, step string, err error) *transientError {
	var what string
	switch {
	case ctx.Err() != nil:
		what = "interrupted: " + ctx.Err().Error()
	case errors.Is(err, context.DeadlineExceeded):
		what = fmt.Sprintf("no answer within %s", p.timeout)
	default:
		what = netguard.Describe(ctx, err)
	}
	return &transientError{msg: fmt.Sprintf("%s %s: %s", p.name, step, what), cause: err}
}

// check classifies r: nil for a 2xx, a *transientError for a 429 or a
// 5xx, an Unprocessable *apperr.Error for anything else.
func (p *platform) check(step string, r reply) error {
	switch {
	case r.status >= 200 && r.status <= 299:
		return nil
	case r.status == http.StatusTooManyRequests || r.status >= 500:
		return &transientError{msg: p.answered(step, r), retryAfter: retry.ParseRetryAfter(r.header.Get("Retry-After"), time.Now())}
	case r.status >= 300 && r.status <= 399:
		return apperr.Errorf(apperr.Unprocessable, "%s (redirects are not followed)", p.answered(step, r))
	default:
		return apperr.Errorf(apperr.Unprocessable, "%s", p.answered(step, r))
	}
}

// answered is "<platform> <step> answered <status>: <excerpt>".
func (p *platform) answered(step string, r reply) string {
	msg := fmt.Sprintf("%s %s answered %d", p.name, step, r.status)
	if ex := p.excerpt(r.body); ex != "" {
		msg += ": " + ex
	}
	return msg
}

// excerpt is at most maxExcerpt characters of a platform's answer, on one
// line, valid UTF-8, with the merchant's credentials blanked out.
func (p *platform) excerpt(body []byte) string {
	s := strings.ToValidUTF8(string(body), "")
	s = p.redact(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	return clip(s, maxExcerpt)
}

func (p *platform) redact(s string) string {
	for _, secret := range p.secrets {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	return s
}
