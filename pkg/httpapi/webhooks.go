package httpapi

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/respond"
	"github.com/convida/convida/pkg/webhook"
)

// WebhookEndpoints is what the webhook-management interface needs of the
// endpoints' store (postgres.WebhookStore): the merchant's endpoints and
// their secrets. An absent endpoint, including another merchant's, is
// apperr.NotFound.
type WebhookEndpoints interface {
	CreateWebhook(ctx context.Context, e *webhook.Endpoint) error
	ListWebhooks(ctx context.Context, merchantID uuid.UUID) ([]webhook.Endpoint, error)
	FindWebhook(ctx context.Context, merchantID, id uuid.UUID) (*webhook.Endpoint, error)
	UpdateWebhook(ctx context.Context, merchantID, id uuid.UUID, patch webhook.Patch) (*webhook.Endpoint, error)
	DeleteWebhook(ctx context.Context, merchantID, id uuid.UUID) error
	RotateWebhookSecret(ctx context.Context, merchantID, id uuid.UUID, newSecret string, overlap time.Duration, now time.Time) (*webhook.Endpoint, error)
	DisableWebhook(ctx context.Context, merchantID, id uuid.UUID, reason string) error
}

// DeliveryLog is the endpoints' delivery log (postgres.WebhookStore): the
// logs route reads it, a test or retry writes its attempt to it. An absent
// record, including another merchant's, is apperr.NotFound.
type DeliveryLog interface {
	RecordAttempts(ctx context.Context, attempts []webhook.Attempt) error
	ListAttempts(ctx context.Context, merchantID, webhookID uuid.UUID, f webhook.AttemptFilter) ([]webhook.Attempt, int, error)
	FindAttempt(ctx context.Context, merchantID, webhookID, id uuid.UUID) (*webhook.Attempt, error)
	LastAttemptNumber(ctx context.Context, merchantID, webhookID, eventID uuid.UUID) (int, error)
}

// EventPayloads returns a stored event byte for byte, for a retry to send
// it again (postgres.WebhookStore); an event no longer kept is
// apperr.NotFound.
type EventPayloads interface {
	EventPayload(ctx context.Context, merchantID, eventID uuid.UUID) (typ string, payload []byte, err error)
}

// webhooksPath is the webhook-management interface: written /v1/webhooks in
// the spec, without the /api prefix of the other interfaces.
const webhooksPath = "/v1/webhooks"

// registerWebhooks adds /v1/webhooks to the admin router, so that its routes
// share the admin chain: API key, lowercase errors, rate limit and
// idempotency. A nil Webhooks or DeliveryLog leaves them all out; a nil
// WebhookSender or EventPayloads the two that send.
func (s *Server) registerWebhooks(admin *mux.Router) {
	if s.cfg.Webhooks == nil || s.cfg.DeliveryLog == nil {
		return
	}
	admin.HandleFunc(webhooksPath, s.listWebhooks).Methods(http.MethodGet)
	admin.HandleFunc(webhooksPath, s.createWebhook).Methods(http.MethodPost)
	admin.HandleFunc(webhooksPath+"/{id}", s.getWebhook).Methods(http.MethodGet)
	admin.HandleFunc(webhooksPath+"/{id}", s.patchWebhook).Methods(http.MethodPatch)
	admin.HandleFunc(webhooksPath+"/{id}", s.deleteWebhook).Methods(http.MethodDelete)
	admin.HandleFunc(webhooksPath+"/{id}/logs", s.listWebhookLogs).Methods(http.MethodGet)
	admin.HandleFunc(webhooksPath+"/{id}/rotate-secret", s.rotateWebhookSecret).Methods(http.MethodPost)
	if s.cfg.WebhookSender != nil && s.cfg.EventPayloads != nil {
		admin.HandleFunc(webhooksPath+"/{id}/test", s.testWebhook).Methods(http.MethodPost)
		admin.HandleFunc(webhooksPath+"/{id}/logs/{log_id}/retry", s.retryWebhookLog).Methods(http.MethodPost)
	}
}

// CreateWebhookRequest is the body of POST /v1/webhooks.
type CreateWebhookRequest struct {
	URL      Optional[string] `json:"url"`
	Events   json.RawMessage  `json:"events"`
	IsActive Optional[bool]   `json:"is_active"`
	Secret   json.RawMessage  `json:"secret"` // present at all: 400, the service generates it
}

// PatchWebhookRequest is the body of PATCH /v1/webhooks/{id}. Every field is
// optional; an absent or null field is left unchanged.
type PatchWebhookRequest struct {
	URL      Optional[string] `json:"url"`
	Events   json.RawMessage  `json:"events"`
	IsActive Optional[bool]   `json:"is_active"`
	Secret   json.RawMessage  `json:"secret"` // present at all: 400, use rotate-secret
}

// LogPagination is the pagination object of the delivery log, which pages
// by offset (spec 4.3) rather than by page.
type LogPagination struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
	Total  int `json:"total"`
}

// DeliveryLogList is the answer of GET /v1/webhooks/{id}/logs.
type DeliveryLogList struct {
	Data       []webhook.AttemptView `json:"data"`
	Pagination LogPagination         `json:"pagination"`
}

// urlFirst returns the fault of rawURL when it is set and has one, else
// eventsErr: the URL is checked before the events, also when the events do
// not decode.
func urlFirst(rawURL *string, eventsErr error) error {
	if err := (&webhook.Patch{URL: rawURL}).Validate(); err != nil {
		return err
	}
	return eventsErr
}

// eventList decodes the events field, required: an array of strings. Its
// rules are webhook.Endpoint.Validate's.
func eventList(raw json.RawMessage) ([]string, error) {
	if !present(raw) {
		return nil, apperr.Errorf(apperr.Invalid, "events: is required")
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, apperr.Errorf(apperr.Invalid, "events: must be an array of event names")
	}
	return list, nil
}

// present reports whether a raw field was given a value other than null.
func present(raw json.RawMessage) bool { return raw != nil && strings.TrimSpace(string(raw)) != "null" }

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) {
	list, err := s.cfg.Webhooks.ListWebhooks(r.Context(), merchantOf(r).ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]webhook.EndpointView, len(list))
	for i := range list {
		out[i] = list[i].View(false)
	}
	respond.JSON(w, http.StatusOK, Data[[]webhook.EndpointView]{Data: out})
}

// createWebhook answers POST /v1/webhooks: 201 with the endpoint and its
// new secret in full, the only answer besides rotate-secret that shows it.
func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) {
	var req CreateWebhookRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Secret != nil {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "secret: is generated by the service and returned in this answer"))
		return
	}
	ep := &webhook.Endpoint{MerchantID: merchantOf(r).ID, URL: req.URL.Value,
		IsActive: !req.IsActive.Set || req.IsActive.Value, Secret: webhook.NewSecret()}
	var err error
	if ep.Events, err = eventList(req.Events); err != nil {
		s.fail(w, r, urlFirst(&ep.URL, err))
		return
	}
	if err := ep.Validate(); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.cfg.Webhooks.CreateWebhook(r.Context(), ep); err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusCreated, Data[webhook.EndpointView]{Data: ep.View(true)})
}

// findWebhook returns the endpoint of the route's {id}; a malformed id, an
// unknown one and another merchant's are all 404.
func (s *Server) findWebhook(r *http.Request) (*webhook.Endpoint, error) {
	id, err := pathID(r, ids.Webhook, "webhook")
	if err != nil {
		return nil, err
	}
	return s.cfg.Webhooks.FindWebhook(r.Context(), merchantOf(r).ID, id)
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) {
	ep, err := s.findWebhook(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[webhook.EndpointView]{Data: ep.View(false)})
}

// patchWebhook answers PATCH /v1/webhooks/{id} (200, secret masked).
func (s *Server) patchWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Webhook, "webhook")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req PatchWebhookRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Secret != nil {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "secret: cannot be set; use POST /v1/webhooks/{id}/rotate-secret"))
		return
	}
	var patch webhook.Patch
	if req.URL.Set {
		patch.URL = &req.URL.Value
	}
	if present(req.Events) {
		if patch.Events, err = eventList(req.Events); err != nil {
			s.fail(w, r, urlFirst(patch.URL, err))
			return
		}
	}
	if req.IsActive.Set {
		patch.IsActive = &req.IsActive.Value
	}
	if err := patch.Validate(); err != nil {
		s.fail(w, r, err)
		return
	}
	ep, err := s.cfg.Webhooks.UpdateWebhook(r.Context(), merchantOf(r).ID, id, patch)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[webhook.EndpointView]{Data: ep.View(false)})
}

// deleteWebhook answers DELETE /v1/webhooks/{id}: 204 without a body. The
// delivery log and the deliveries still owed go with the endpoint.
func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Webhook, "webhook")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.cfg.Webhooks.DeleteWebhook(r.Context(), merchantOf(r).ID, id); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listWebhookLogs answers GET /v1/webhooks/{id}/logs: limit 1–100 (default
// 50), offset ≥ 0 (default 0), status success or failed; newest first.
func (s *Server) listWebhookLogs(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Webhook, "webhook")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := webhook.AttemptFilter{Status: r.URL.Query().Get("status")}
	if f.Limit, err = intQuery(r, "limit", 50, 1, 100); err != nil {
		s.fail(w, r, err)
		return
	}
	if f.Offset, err = intQuery(r, "offset", 0, 0, math.MaxInt32); err != nil {
		s.fail(w, r, err)
		return
	}
	if f.Status != "" && f.Status != webhook.StatusSuccess && f.Status != webhook.StatusFailed {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "status: must be success or failed"))
		return
	}
	m := merchantOf(r).ID
	if _, err := s.cfg.Webhooks.FindWebhook(r.Context(), m, id); err != nil {
		s.fail(w, r, err)
		return
	}
	list, total, err := s.cfg.DeliveryLog.ListAttempts(r.Context(), m, id, f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := DeliveryLogList{Data: make([]webhook.AttemptView, len(list)),
		Pagination: LogPagination{Limit: f.Limit, Offset: f.Offset, Total: total}}
	for i := range list {
		out.Data[i] = list[i].View()
	}
	respond.JSON(w, http.StatusOK, out)
}

// rotateWebhookSecret answers POST /v1/webhooks/{id}/rotate-secret: 200
// with the new secret in full. The old one keeps signing the Standard
// Webhooks header for webhook.RotationOverlap.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, ids.Webhook, "webhook")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ep, err := s.cfg.Webhooks.RotateWebhookSecret(r.Context(), merchantOf(r).ID, id, webhook.NewSecret(), webhook.RotationOverlap, s.cfg.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[webhook.EndpointView]{Data: ep.View(true)})
}

// errInactive refuses to send to an endpoint the merchant or the dispatcher
// switched off: it receives nothing until re-enabled.
func errInactive() error {
	return apperr.Errorf(apperr.InvalidState, "the webhook is inactive; re-enable it with PATCH is_active: true first")
}

// testWebhook answers POST /v1/webhooks/{id}/test: one webhook.test event,
// sent now to this endpoint only, whatever it subscribes to; 200 with the
// attempt's log record, whether the receiver accepted it or not.
func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request) {
	ep, err := s.findWebhook(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !ep.IsActive {
		s.fail(w, r, errInactive())
		return
	}
	a, err := s.manual().SendTest(r.Context(), ep)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[webhook.AttemptView]{Data: a.View()})
}

// retryWebhookLog answers POST /v1/webhooks/{id}/logs/{log_id}/retry: the
// record's event is sent again now, as the next attempt of that event (the
// same id and bytes, so receivers deduplicate it); a webhook.test record
// sends a fresh test event. Scheduled retries are not affected.
func (s *Server) retryWebhookLog(w http.ResponseWriter, r *http.Request) {
	ep, err := s.findWebhook(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	logID, ok := ids.Parse(ids.DeliveryLog, mux.Vars(r)["log_id"])
	if !ok {
		s.fail(w, r, apperr.Errorf(apperr.NotFound, "delivery log record not found"))
		return
	}
	m := merchantOf(r).ID
	rec, err := s.cfg.DeliveryLog.FindAttempt(r.Context(), m, ep.ID, logID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !ep.IsActive {
		s.fail(w, r, errInactive())
		return
	}
	a, err := s.manual().Retry(r.Context(), ep, rec)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, Data[webhook.AttemptView]{Data: a.View()})
}

// manual makes the test and retry attempts, as the dashboard's do.
func (s *Server) manual() *webhook.Manual {
	return &webhook.Manual{Sender: s.cfg.WebhookSender, Now: s.cfg.Now,
		Store: manualStore{s.cfg.DeliveryLog, s.cfg.EventPayloads, s.cfg.Webhooks}}
}

// manualStore joins the stores a manual attempt reads and writes.
type manualStore struct {
	DeliveryLog
	EventPayloads
	WebhookEndpoints
}
