package platform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/retry"
)

// What a failed call is called. Every error of this package's calls says
// "<platform> <step>: <what happened>": netguard's sentence for a failed
// connection, or the status the platform answered with an excerpt of its
// body, the account's credentials blanked out. Its text, and the text of
// every error it wraps, never holds the request's URL (Hotmart's client
// secret rides in the query of its token request), the address dialled
// or a credential: the text reaches the merchant (a run's error, a
// redemption's reason, a coupon's error) and the log (zap.Error) alike.

// Describe is the one description of an error returned by a platform call,
// fit for the merchant and for the log: its message, as above. An error
// that did not come from a platform call is "internal error", its details
// not repeated.
func Describe(err error) string {
	var a *apperr.Error
	var t *TransientError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &a):
		return a.Message
	case errors.As(err, &t):
		return t.Msg
	}
	return apperr.MessageOf(err)
}

// quiet keeps a transport error for errors.Is and errors.As (a refused
// address, a timeout, a DNS answer) while its text is netguard's
// sentence: the error's own text names the request's URL, query
// included, and the address dialled.
type quiet struct{ err error }

func (q quiet) Error() string { return netguard.Describe(context.Background(), q.err) }
func (q quiet) Unwrap() error { return q.err }

// failed describes an exchange that got no answer. A refused address
// (netguard: not public, not https) stays refused — the merchant must
// change the API URL — so it is an Unprocessable *apperr.Error, not worth
// a retry; anything else is a *TransientError.
func (e *endpoint) failed(ctx context.Context, step string, err error) error {
	if errors.Is(err, netguard.ErrNotPublic) || errors.Is(err, netguard.ErrNotHTTPS) {
		return apperr.Wrap(apperr.Unprocessable, quiet{err}, e.name+" "+step+": "+netguard.Describe(ctx, err))
	}
	return e.networkError(ctx, step, err)
}

// networkError describes a failed exchange in netguard.Describe's words:
// what went wrong, never the URL, the address or the dialler's error,
// which would tell a merchant about the operator's network. ctx is the
// caller's: its end is told apart from the per-request timeout.
func (e *endpoint) networkError(ctx context.Context, step string, err error) *TransientError {
	var what string
	switch {
	case ctx.Err() != nil:
		what = "interrupted: " + ctx.Err().Error()
	case errors.Is(err, context.DeadlineExceeded):
		what = fmt.Sprintf("no answer within %s", e.c.timeout())
	default:
		what = netguard.Describe(ctx, err)
	}
	return &TransientError{Msg: fmt.Sprintf("%s %s: %s", e.name, step, what), Cause: quiet{err}}
}

// check classifies r: nil for a 2xx, a *TransientError for a 429 or a
// 5xx, an Unprocessable *apperr.Error for anything else.
func (e *endpoint) check(step string, r reply) error {
	switch {
	case r.status >= 200 && r.status <= 299:
		return nil
	case r.status == http.StatusTooManyRequests || r.status >= 500:
		return &TransientError{Msg: e.answered(step, r), Wait: retry.ParseRetryAfter(r.header.Get("Retry-After"), time.Now())}
	case r.status >= 300 && r.status <= 399:
		return apperr.Errorf(apperr.Unprocessable, "%s (redirects are not followed)", e.answered(step, r))
	case r.status == http.StatusUnauthorized:
		return apperr.Wrap(apperr.Unprocessable, errUnauthorized, e.answered(step, r))
	default:
		return apperr.Errorf(apperr.Unprocessable, "%s", e.answered(step, r))
	}
}

// answered is "<platform> <step> answered <status>: <excerpt>".
func (e *endpoint) answered(step string, r reply) string {
	msg := fmt.Sprintf("%s %s answered %d", e.name, step, r.status)
	if ex := e.excerpt(r.body); ex != "" {
		msg += ": " + ex
	}
	return msg
}

// excerpt is at most maxExcerpt characters of a platform's answer, on one
// line, valid UTF-8, with the merchant's credentials blanked out in every
// spelling the request carried them (a platform may echo the request).
func (e *endpoint) excerpt(body []byte) string {
	s := strings.ToValidUTF8(string(body), "")
	for _, secret := range e.secrets {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	return Clip(s, maxExcerpt)
}

// spellings are the secrets as an answer may repeat them: as given, and
// escaped as a query or form value and as a path segment. Values shorter
// than 4 characters are left out: blanking them would blank ordinary
// words.
func spellings(secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		if len(s) < 4 {
			continue
		}
		for _, v := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// Clip shortens s to n runes for a message, marking the cut with "…".
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
