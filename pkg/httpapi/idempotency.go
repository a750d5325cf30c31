package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/respond"
)

// storedAnswer is what is kept of a first answer and replayed.
type storedAnswer struct {
	Status int               `json:"status"`
	Header map[string]string `json:"header,omitempty"`
	// Text is the body when it is UTF-8 text, as every answer of the API
	// is: kept readable, so that an erasure finds the answers that name
	// the member (privacy.Answers). Body is any other body, and the bodies
	// kept before Text existed (base64 in the record).
	Text *string `json:"text,omitempty"`
	Body []byte  `json:"body,omitempty"`
}

// keptInstead is where a handler whose answer shows a secret leaves the
// body to keep for the replays in its place (writeSecretOnce).
type keptInstead struct {
	body []byte
	set  bool
	drop bool // the replacement could not be made: keep nothing
}

type keptInsteadKey struct{}

// writeSecretOnce answers status with full, an answer that shows a secret
// in full (a webhook's signing secret, a creator token), and has the
// idempotency middleware keep masked for the replays in its place: the
// same answer with the secret as the later reads show it, masked. So a
// secret is shown once and never reaches the idempotency store
// (docs/security.md, "Idempotent replays"). Without an Idempotency-Key it
// is respond.JSON.
func writeSecretOnce(w http.ResponseWriter, r *http.Request, status int, full, masked any) {
	if slot, ok := r.Context().Value(keptInsteadKey{}).(*keptInstead); ok {
		var b bytes.Buffer
		err := json.NewEncoder(&b).Encode(masked) // as respond.JSON writes it
		slot.body, slot.set, slot.drop = b.Bytes(), true, err != nil
	}
	respond.JSON(w, status, full)
}

// replayedHeaders are the headers of an answer that are kept and replayed
// (RateLimit-* belong to the replay, not to the first answer; a replayed
// secret stays out of caches).
var replayedHeaders = []string{"Content-Type", "Location", "Cache-Control"}

// idempotency replays POST and PATCH answers by Idempotency-Key (decision
// 12). The key (1–255 characters) is scoped to the merchant; the request's
// fingerprint is the SHA-256 of its method, path with query, and body. The
// first request claims the key and runs; its answer (status, body,
// Content-Type and Location) is kept for Retention and replayed, with
// Idempotent-Replayed: true, to a request with the same key and
// fingerprint. The same key with another fingerprint is 422
// idempotency_key_reused; with the same fingerprint while the first still
// runs, 409 idempotency_key_in_use. An answer that showed a secret is
// kept, and replayed, with the secret masked (writeSecretOnce).
//
// 4xx answers are kept like successes (as Stripe does): retrying a refused
// request with the same key gets the same refusal, and a corrected request
// needs a new key. A 5xx answer (or a panic) is not kept: the claim is
// released so a retry runs again. A body over 1 MiB is 413 before anything
// is claimed. When the store fails the request runs unprotected; the
// database's unique constraints and the ledger's command ids remain the
// guarantee against a duplicate effect.
func (s *Server) idempotency(next http.Handler) http.Handler {
	store := s.cfg.Protection.Idempotency
	if store == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values, present := r.Header["Idempotency-Key"]
		m := merchantOf(r)
		if !present || m == nil || (r.Method != http.MethodPost && r.Method != http.MethodPatch) {
			next.ServeHTTP(w, r)
			return
		}
		key, err := idempotencyKey(values)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				s.fail(w, r, apperr.Errorf(apperr.PayloadTooLarge, "request body over 1 MiB"))
				return
			}
			s.fail(w, r, apperr.Errorf(apperr.Invalid, "cannot read request body"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))

		p := &s.cfg.Protection
		var claim string
		var answer []byte
		var refusal error
		ok := s.callStore(r, &p.state.idempotency, "idempotency", func(ctx context.Context) (err error) {
			claim, answer, err = store.Begin(ctx, m.ID.String(), key, fingerprint(r, body), orDefault(p.Lock, defaultLock))
			if code := apperr.CodeOf(err); code == apperr.IdempotencyInUse || code == apperr.IdempotencyReused {
				refusal, err = err, nil
			}
			return err
		})
		switch {
		case !ok:
			next.ServeHTTP(w, r)
		case refusal != nil:
			s.fail(w, r, refusal)
		case claim == "":
			s.replay(w, r, answer)
		default:
			s.runClaimed(w, r, next, claim)
		}
	})
}

// idempotencyKey validates the Idempotency-Key header's values.
func idempotencyKey(values []string) (string, error) {
	if len(values) != 1 {
		return "", apperr.Errorf(apperr.Invalid, "Idempotency-Key: must be given once")
	}
	k := values[0]
	if n := utf8.RuneCountInString(k); k == "" || n > maxIdempotencyKey || !utf8.ValidString(k) {
		return "", apperr.Errorf(apperr.Invalid, "Idempotency-Key: must be 1 to %d characters", maxIdempotencyKey)
	}
	return k, nil
}

// fingerprint digests what makes two requests the same request.
func fingerprint(r *http.Request, body []byte) string {
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.RequestURI() + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// runClaimed runs the request holding claim, then keeps its answer or, for
// a 5xx or a panic, releases the claim.
func (s *Server) runClaimed(w http.ResponseWriter, r *http.Request, next http.Handler, claim string) {
	p := &s.cfg.Protection
	rec := &recorder{ResponseWriter: w}
	instead := &keptInstead{}
	r = r.WithContext(context.WithValue(r.Context(), keptInsteadKey{}, instead))
	kept := false
	defer func() {
		if !kept {
			s.callStore(r, &p.state.idempotency, "idempotency", func(ctx context.Context) error {
				return p.Idempotency.Release(ctx, claim)
			})
		}
	}()
	next.ServeHTTP(rec, r)
	status := rec.statusOrOK()
	if status >= 500 || rec.overflow || instead.drop {
		return
	}
	body := rec.body.Bytes()
	if instead.set {
		body = instead.body
	}
	a := storedAnswer{Status: status, Header: map[string]string{}, Body: body}
	if utf8.Valid(body) {
		text := string(body)
		a.Text, a.Body = &text, nil
	}
	for _, name := range replayedHeaders {
		if v := w.Header().Get(name); v != "" {
			a.Header[name] = v
		}
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return
	}
	kept = s.callStore(r, &p.state.idempotency, "idempotency", func(ctx context.Context) error {
		return p.Idempotency.Complete(ctx, claim, raw, orDefault(p.Retention, defaultRetention))
	})
}

// replay writes a kept answer.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, raw []byte) {
	var a storedAnswer
	if err := json.Unmarshal(raw, &a); err != nil || a.Status < 100 {
		s.fail(w, r, apperr.Wrap(apperr.Internal, err, "stored idempotent answer is unreadable"))
		return
	}
	h := w.Header()
	for name, v := range a.Header {
		h.Set(name, v)
	}
	h.Set("Idempotent-Replayed", "true")
	w.WriteHeader(a.Status)
	if a.Text != nil {
		_, _ = io.WriteString(w, *a.Text)
		return
	}
	_, _ = w.Write(a.Body)
}

// recorder passes an answer through while keeping a copy of it.
type recorder struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	overflow bool // the body outgrew maxStoredAnswer: it is not kept
}

func (c *recorder) WriteHeader(status int) {
	if c.status == 0 && status >= 200 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *recorder) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if !c.overflow {
		if c.body.Len()+len(b) > maxStoredAnswer {
			c.overflow = true
			c.body = bytes.Buffer{}
		} else {
			c.body.Write(b)
		}
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (c *recorder) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *recorder) statusOrOK() int {
	if c.status == 0 {
		return http.StatusOK
	}
	return c.status
}
