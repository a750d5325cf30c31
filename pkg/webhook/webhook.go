// Package webhook is the outbound side of Convida (webhooks.md): the
// endpoints merchants register and their rules, the delivery log, the retry
// jobs the dispatcher works through, and the mechanics of one attempt
// (signing, the dial-time address check, the response classification, the
// retry schedule).
//
// Storage lives in pkg/postgres (webhook_endpoints.go, webhook_attempts.go,
// webhook_jobs.go), the management API in pkg/httpapi (webhooks.go) and the
// delivery engine in pkg/dispatch; the event types are named in pkg/event.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/netguard"
)

// Disabled reasons shown on an endpoint that the dispatcher switched off.
const (
	DisabledGone    = "endpoint answered 410 Gone"
	DisabledFailing = "every delivery failed for 5 days"
)

// Delivery log statuses.
const (
	StatusSuccess = "success"
	StatusFailed  = "failed"
)

// Endpoint is a merchant's webhook endpoint (spec 2.10).
type Endpoint struct {
	MerchantID uuid.UUID
	ID         uuid.UUID
	URL        string
	Events     []string
	IsActive   bool
	// Secret is the current signing secret in clear (whsec_…); it is
	// stored encrypted and leaves the service only in the creation and
	// rotation answers.
	Secret string
	// PreviousSecret keeps signing (Standard Webhooks header only) until
	// PreviousSecretExpiresAt after a rotation; empty when none.
	PreviousSecret          string
	PreviousSecretExpiresAt time.Time
	// DisabledReason says why the dispatcher set IsActive=false; empty
	// when the merchant did it or the endpoint is active.
	DisabledReason string
	// FailingSince is the first failed attempt of the current unbroken run
	// of failures; zero after a success.
	FailingSince time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// MaxURLLength bounds an endpoint URL, in characters.
const MaxURLLength = 2048

// Validate checks the URL and the events of e as the merchant wrote them
// and, when both are valid, puts them in their stored form. The URL must be
// an absolute https URL with a host, at most MaxURLLength characters once
// trimmed; it is stored trimmed with its scheme in lower case, the rest as
// written. Its host must not be a loopback, private, link-local or other
// non-public address literal, nor a name of the local machine (localhost,
// a single label): netguard.CheckURL, the guard of a platform's api_url
// (issue 29), unless allowPrivate (WEBHOOK_ALLOW_PRIVATE_NETWORKS). A name
// is not resolved here: DNS may answer otherwise by the time of a delivery,
// and telling a name that resolves to a private address apart from one
// that does not resolve would make registration a probe of the operator's
// DNS; every address dialled is checked at dial time. The events must be
// at least one subscribable type (event.IsSubscribable); duplicates are
// dropped, the first order kept. The error is apperr.Invalid naming the
// field (an event by its index in e.Events as given); a non-public address
// is rule apperr.RuleNotPublic, with netguard.ErrNotPublic its cause.
func (e *Endpoint) Validate(allowPrivate bool) error {
	u, err := cleanURL(e.URL, allowPrivate)
	if err != nil {
		return err
	}
	events, err := cleanEvents(e.Events)
	if err != nil {
		return err
	}
	e.URL, e.Events = u, events
	return nil
}

// cleanURL returns raw in its stored form, or why it is refused.
func cleanURL(raw string, allowPrivate bool) (string, error) {
	u := strings.TrimSpace(raw)
	if u == "" {
		return "", apperr.Invalidf("url", apperr.RuleRequired, "is required")
	}
	if utf8.RuneCountInString(u) > MaxURLLength {
		return "", apperr.Invalidf("url", apperr.RuleTooLong, "must be at most %d characters", MaxURLLength).WithLimit(MaxURLLength)
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme == "" || p.Opaque != "" || p.Hostname() == "" {
		return "", apperr.Invalidf("url", apperr.RuleFormat, "must be an absolute https URL with a host")
	}
	if p.Scheme != "https" {
		return "", apperr.Invalidf("url", apperr.RuleHTTPS, "must use https (got %s)", p.Scheme)
	}
	if err := netguard.CheckURL(u, allowPrivate); errors.Is(err, netguard.ErrNotPublic) {
		return "", apperr.Invalidf("url", apperr.RuleNotPublic, "%s", netguard.ErrNotPublic).WithCause(netguard.ErrNotPublic)
	}
	// url.Parse lowercases the scheme; store it so ("HTTPS://" → "https://")
	// and keep the rest exactly as the merchant wrote it.
	return p.Scheme + u[len(p.Scheme):], nil
}

// cleanEvents returns list without duplicates, or why it is refused.
func cleanEvents(list []string) ([]string, error) {
	if len(list) == 0 {
		return nil, apperr.Invalidf("events", apperr.RuleRequired, "must name at least one event")
	}
	out := make([]string, 0, len(list))
	for i, typ := range list {
		if !event.IsSubscribable(typ) {
			return nil, apperr.Invalidf(fmt.Sprintf("events[%d]", i), apperr.RuleNotAllowed, "unknown event; use one of %s", strings.Join(event.Subscribable, ", "))
		}
		if !slices.Contains(out, typ) {
			out = append(out, typ)
		}
	}
	return out, nil
}

// Subscribed reports whether the endpoint receives events of type typ.
func (e *Endpoint) Subscribed(typ string) bool { return slices.Contains(e.Events, typ) }

// Secrets returns the secrets that sign an attempt at now: the current one
// first, then the previous one while its overlap lasts.
func (e *Endpoint) Secrets(now time.Time) []string {
	if e.PreviousSecret != "" && now.Before(e.PreviousSecretExpiresAt) {
		return []string{e.Secret, e.PreviousSecret}
	}
	return []string{e.Secret}
}

// EndpointView is the JSON shape of an endpoint (spec 2.10).
type EndpointView struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	IsActive       bool     `json:"is_active"`
	Secret         string   `json:"secret"`
	DisabledReason *string  `json:"disabled_reason"`
	CreatedAt      string   `json:"created_at"`
	UpdatedAt      string   `json:"updated_at"`
}

// MaskSecret shows a secret as whsec_**** and its last 4 characters.
func MaskSecret(secret string) string {
	if len(secret) < 4 {
		return "whsec_****"
	}
	return "whsec_****" + secret[len(secret)-4:]
}

// View renders the endpoint; the secret is whole only when full is true
// (the creation and rotation answers).
func (e *Endpoint) View(full bool) EndpointView {
	v := EndpointView{
		ID: ids.Format(ids.Webhook, e.ID), URL: e.URL, Events: e.Events, IsActive: e.IsActive,
		Secret: MaskSecret(e.Secret), CreatedAt: jsontime.Format(e.CreatedAt), UpdatedAt: jsontime.Format(e.UpdatedAt),
	}
	if v.Events == nil {
		v.Events = []string{}
	}
	if full {
		v.Secret = e.Secret
	}
	if e.DisabledReason != "" {
		reason := e.DisabledReason
		v.DisabledReason = &reason
	}
	return v
}

// Attempt is one delivery log record: one HTTP attempt of one event to one
// endpoint.
type Attempt struct {
	MerchantID     uuid.UUID
	ID             uuid.UUID // shown as whl_…
	WebhookID      uuid.UUID
	EventID        uuid.UUID
	EventType      string
	Status         string // StatusSuccess or StatusFailed
	Attempt        int    // 1-based
	ResponseStatus int    // 0 on a network error (shown as null)
	ResponseBody   string // at most 1 KiB
	Error          string
	DurationMS     int64
	NextRetryAt    time.Time // zero when no retry follows
	CreatedAt      time.Time
}

// AttemptView is the JSON shape of a delivery log record (webhooks.md).
type AttemptView struct {
	ID             string  `json:"id"`
	WebhookID      string  `json:"webhook_id"`
	EventID        string  `json:"event_id"`
	EventType      string  `json:"event_type"`
	Status         string  `json:"status"`
	Attempt        int     `json:"attempt"`
	ResponseStatus *int    `json:"response_status"`
	ResponseBody   string  `json:"response_body"`
	Error          string  `json:"error"`
	DurationMS     int64   `json:"duration_ms"`
	NextRetryAt    *string `json:"next_retry_at"`
	CreatedAt      string  `json:"created_at"`
}

// View renders the record.
func (a *Attempt) View() AttemptView {
	v := AttemptView{
		ID: ids.Format(ids.DeliveryLog, a.ID), WebhookID: ids.Format(ids.Webhook, a.WebhookID),
		EventID: ids.Format(ids.Event, a.EventID), EventType: a.EventType, Status: a.Status, Attempt: a.Attempt,
		ResponseBody: a.ResponseBody, Error: a.Error, DurationMS: a.DurationMS,
		NextRetryAt: jsontime.Ptr(a.NextRetryAt), CreatedAt: jsontime.Format(a.CreatedAt),
	}
	if a.ResponseStatus != 0 {
		status := a.ResponseStatus
		v.ResponseStatus = &status
	}
	return v
}

// Job is one event owed to one endpoint and not yet delivered: the unit
// of work of the dispatcher. It lives in Postgres until it succeeds, runs
// out of attempts or its endpoint is disabled, so retries never sit in the
// consumer's path.
type Job struct {
	MerchantID    uuid.UUID
	WebhookID     uuid.UUID
	EventID       uuid.UUID
	EventType     string
	Payload       []byte    // the envelope: the same bytes on every attempt
	Attempts      int       // attempts made so far
	NextAttemptAt time.Time // due time, or the end of the lease of the dispatcher holding it
	CreatedAt     time.Time
}

// Delivery is what one attempt sends.
type Delivery struct {
	URL       string
	Secrets   []string // Endpoint.Secrets(now): the first signs X-Service-Signature, all sign webhook-signature
	EventID   uuid.UUID
	EventType string
	LogID     uuid.UUID // the Attempt's id, sent as X-Service-Delivery (whl_…)
	Payload   []byte    // the envelope
}

// Result is what one attempt got back.
type Result struct {
	Success    bool          // a 2xx within the timeout
	Gone       bool          // 410: the endpoint must be disabled at once
	StatusCode int           // 0 when no response arrived
	Body       string        // the response body, at most 1 KiB, valid UTF-8
	Error      string        // why it failed ("" on success)
	Duration   time.Duration // from dial to the end of the body
	RetryAfter time.Duration // a 429 or 503's Retry-After, 0 when absent
}

// Sender makes one attempt. The implementation is Client.
type Sender interface {
	Send(ctx context.Context, d Delivery) Result
}

// JobOutcome is what became of one job the dispatcher worked on.
type JobOutcome struct {
	Job Job
	// Attempt is the attempt made, written to the log; a zero Status means
	// none was made (the job is only deleted or rescheduled).
	Attempt Attempt
	// Delete removes the job: delivered, out of attempts, or its endpoint
	// is gone or disabled.
	Delete bool
	// NextAttemptAt is when a job that is not deleted is due again.
	NextAttemptAt time.Time
	// Unstored says the job has no row: the dispatcher delivered it straight
	// from the consumer's batch. Deleting it is then a no-op, and
	// rescheduling it writes its row.
	Unstored bool
}

// Patch is a change to an endpoint; a nil field is left unchanged.
type Patch struct {
	URL      *string
	Events   []string // nil: unchanged; empty is refused by Validate
	IsActive *bool
}

// Validate checks the URL and the events p sets by the rules of
// Endpoint.Validate and, when they are valid, puts them in their stored
// form.
func (p *Patch) Validate(allowPrivate bool) error {
	if p.URL != nil {
		u, err := cleanURL(*p.URL, allowPrivate)
		if err != nil {
			return err
		}
		p.URL = &u
	}
	if p.Events != nil {
		events, err := cleanEvents(p.Events)
		if err != nil {
			return err
		}
		p.Events = events
	}
	return nil
}

// AttemptFilter selects a page of the delivery log.
type AttemptFilter struct {
	Status        string // "" (any), StatusSuccess or StatusFailed
	Limit, Offset int
}
