package platform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/convida/convida/pkg/apperr"
)

// errUnauthorized marks a platform's 401: a cached access token may have
// been revoked before its time, and is fetched anew once.
var errUnauthorized = errors.New("the platform answered 401")

// tokenCache keeps the access tokens of client-credentials accounts
// (Hotmart, Kiwify) for their lifetime, keyed by a digest of the account.
type tokenCache struct {
	mu sync.Mutex
	m  map[string]cachedToken
}

type cachedToken struct {
	value   string
	expires time.Time
}

func (t *tokenCache) get(key string, now time.Time) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, ok := t.m[key]
	if !ok || !now.Before(tok.expires) {
		return "", false
	}
	return tok.value, true
}

// put keeps value until expires, and forgets the tokens expired by now.
func (t *tokenCache) put(key, value string, now, expires time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]cachedToken{}
	}
	for k, tok := range t.m {
		if !now.Before(tok.expires) {
			delete(t.m, k)
		}
	}
	t.m[key] = cachedToken{value: value, expires: expires}
}

func (t *tokenCache) drop(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, key)
}

// tokenMaxLife bounds how long a token is kept, whatever expires_in says.
const tokenMaxLife = 7 * 24 * time.Hour

// tokenKey is the cache key of an account: a digest of what identifies
// it, so that the cache holds no credential in clear.
func tokenKey(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])
}

// oauthAnswer is a token endpoint's answer.
type oauthAnswer struct {
	AccessToken string          `json:"access_token"`
	ExpiresIn   json.RawMessage `json:"expires_in"` // seconds, a number or a string of one
}

// lifetime is how long the token may be used: expires_in less a margin
// (a tenth, at most a minute), fallback when the answer does not say.
func (a oauthAnswer) lifetime(fallback time.Duration) time.Duration {
	d := fallback
	text := strings.Trim(strings.TrimSpace(string(a.ExpiresIn)), `"`)
	if secs, err := strconv.ParseInt(text, 10, 64); err == nil && secs > 0 {
		d = time.Duration(min(secs, int64(tokenMaxLife/time.Second))) * time.Second
	}
	return d - min(d/10, time.Minute)
}

// tokenSource is how one account gets an access token.
type tokenSource struct {
	key      string                                         // tokenKey of the account
	fetch    func(ctx context.Context) (oauthAnswer, error) // asks the token endpoint
	fallback time.Duration                                  // the lifetime when expires_in is absent
	name     string                                         // provider.Hotmart, provider.Kiwify
}

// bearer returns the account's access token: the cached one, or a new one
// from the token endpoint (identical token requests in flight are shared
// by the endpoint's send).
func (c *Client) bearer(ctx context.Context, src tokenSource) (string, error) {
	if tok, ok := c.tokens.get(src.key, c.now()); ok {
		return tok, nil
	}
	ans, err := src.fetch(ctx)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(ans.AccessToken) == "" {
		return "", apperr.Errorf(apperr.Unprocessable, "%s token endpoint answered without an access_token", src.name)
	}
	now := c.now()
	c.tokens.put(src.key, ans.AccessToken, now, now.Add(ans.lifetime(src.fallback)))
	return ans.AccessToken, nil
}

// getAuthed is getJSON with the account's Bearer token; a 401 drops the
// cached token and tries once more with a new one.
func (c *Client) getAuthed(ctx context.Context, src tokenSource, ep *endpoint, r request, v any) error {
	for try := 0; ; try++ {
		tok, err := c.bearer(ctx, src)
		if err != nil {
			return err
		}
		err = ep.withBearer(tok).getJSON(ctx, r, v)
		if !errors.Is(err, errUnauthorized) || try > 0 {
			return err
		}
		c.tokens.drop(src.key)
	}
}
