package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/webhook"
)

// Webhooks: the merchant's endpoints (create with the secret shown once,
// edit, disable and enable, delete, rotate the secret, send a test event)
// and each one's delivery log (retry one), by the rules of /v1/webhooks.

// logsPerPage is the delivery log's page size.
const logsPerPage = 25

// endpointView is what the pages show of an endpoint: never its secret,
// only the secret's masked form.
type endpointView struct {
	ID             uuid.UUID
	PublicID       string // whk_…, as the API names it
	URL            string
	Events         []string
	IsActive       bool
	DisabledReason string
	FailingSince   time.Time
	MaskedSecret   string
	CreatedAt      time.Time
}

func viewEndpoint(e *webhook.Endpoint) endpointView {
	return endpointView{ID: e.ID, PublicID: ids.Format(ids.Webhook, e.ID), URL: e.URL, Events: e.Events,
		IsActive: e.IsActive, DisabledReason: e.DisabledReason, FailingSince: e.FailingSince,
		MaskedSecret: webhook.MaskSecret(e.Secret), CreatedAt: e.CreatedAt}
}

// eventChoice is one checkbox of the events.
type eventChoice struct {
	Name    string
	Checked bool
}

func eventChoices(checked []string) []eventChoice {
	out := make([]eventChoice, len(event.Subscribable))
	for i, name := range event.Subscribable {
		out[i] = eventChoice{Name: name, Checked: slices.Contains(checked, name)}
	}
	return out
}

type webhooksData struct {
	Endpoints []endpointView
	Events    []eventChoice // the creation form's
	URL       string        // the creation form's, after a refusal
	Alert     string
}

type webhookData struct {
	Endpoint   endpointView
	NewSecret  string // only in the answer to the creation or a rotation
	Events     []eventChoice
	URL        string // the edit form's
	Alert      string
	Attempts   []webhook.Attempt
	Tabs       []Tab
	Pagination Pagination
}

type webhookLogData struct {
	Endpoint endpointView
	Attempt  webhook.Attempt
	PublicID string // whl_…
	Request  string // the event as sent, indented; "" when no longer kept
}

func (d *Dashboard) webhookRoutes() {
	d.page("GET "+Prefix+"/webhooks", d.webhooks)
	d.action("POST "+Prefix+"/webhooks", d.createWebhook)
	d.page("GET "+Prefix+"/webhooks/{id}", d.webhook)
	d.action("POST "+Prefix+"/webhooks/{id}", d.editWebhook)
	d.action("POST "+Prefix+"/webhooks/{id}/active", d.setWebhookActive)
	d.page("GET "+Prefix+"/webhooks/{id}/delete", d.confirmDeleteWebhook)
	d.action("POST "+Prefix+"/webhooks/{id}/delete", d.deleteWebhook)
	d.action("POST "+Prefix+"/webhooks/{id}/rotate-secret", d.rotateWebhookSecret)
	d.action("POST "+Prefix+"/webhooks/{id}/test", d.testWebhook)
	d.page("GET "+Prefix+"/webhooks/{id}/logs/{log_id}", d.webhookLog)
	d.action("POST "+Prefix+"/webhooks/{id}/logs/{log_id}/retry", d.retryWebhookLog)
}

func (d *Dashboard) webhooks(w http.ResponseWriter, r *http.Request, c *Ctx) {
	d.showWebhooks(w, r, c, webhooksData{Events: eventChoices(nil)}, http.StatusOK)
}

func (d *Dashboard) showWebhooks(w http.ResponseWriter, r *http.Request, c *Ctx, data webhooksData, status int) {
	list, err := d.cfg.Stores.Webhooks.ListWebhooks(r.Context(), c.MerchantID())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	for i := range list {
		data.Endpoints = append(data.Endpoints, viewEndpoint(&list[i]))
	}
	d.render(w, r, c, Page{Template: "webhooks", Title: "title.webhooks", Nav: "webhooks", Status: status, Data: data})
}

// invalidKey turns a webhook.Validate refusal into the form's message.
func invalidKey(err error) string {
	if errors.Is(err, netguard.ErrNotPublic) {
		return "webhooks.url_not_public"
	}
	if isField(err, "url") {
		return "webhooks.bad_url"
	}
	return "webhooks.bad_events"
}

// submittedEvents is the form's checked events, empty (not nil) when none
// is, so that validation refuses it rather than keeping the old ones.
func submittedEvents(r *http.Request) []string {
	if err := r.ParseForm(); err != nil {
		return []string{}
	}
	return append([]string{}, r.PostForm["events"]...)
}

// createWebhook answers with the new endpoint's page rather than a
// redirect: its secret is shown in this response only.
func (d *Dashboard) createWebhook(w http.ResponseWriter, r *http.Request, c *Ctx) {
	ep := &webhook.Endpoint{MerchantID: c.MerchantID(), URL: r.PostFormValue("url"), Events: submittedEvents(r),
		IsActive: true, Secret: webhook.NewSecret()}
	if err := ep.Validate(d.cfg.Webhooks.AllowPrivateNetworks); err != nil {
		if !apperr.Is(err, apperr.Invalid) {
			d.fail(w, r, c, err)
			return
		}
		d.showWebhooks(w, r, c, webhooksData{Events: eventChoices(ep.Events), URL: ep.URL, Alert: invalidKey(err)},
			http.StatusUnprocessableEntity)
		return
	}
	if err := d.cfg.Stores.Webhooks.CreateWebhook(r.Context(), ep); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.showWebhook(w, r, c, ep, webhookData{NewSecret: ep.Secret}, http.StatusOK)
}

// findWebhook returns the merchant's endpoint of the path's {id}; false
// (and a 404 written) for a bad id, another merchant's or a missing one.
func (d *Dashboard) findWebhook(w http.ResponseWriter, r *http.Request, c *Ctx) (*webhook.Endpoint, bool) {
	id, ok := ids.Parse(ids.Webhook, r.PathValue("id"))
	if !ok {
		d.notFound(w, r, c)
		return nil, false
	}
	ep, err := d.cfg.Stores.Webhooks.FindWebhook(r.Context(), c.MerchantID(), id)
	if err != nil {
		d.fail(w, r, c, err)
		return nil, false
	}
	return ep, true
}

func (d *Dashboard) webhook(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if ep, ok := d.findWebhook(w, r, c); ok {
		d.showWebhook(w, r, c, ep, webhookData{}, http.StatusOK)
	}
}

// showWebhook renders an endpoint's page with its delivery log, filtered
// by ?status= (success or failed) and paginated.
func (d *Dashboard) showWebhook(w http.ResponseWriter, r *http.Request, c *Ctx, ep *webhook.Endpoint, data webhookData, status int) {
	ctx, m := r.Context(), c.MerchantID()
	data.Endpoint = viewEndpoint(ep)
	if data.Events == nil {
		data.Events, data.URL = eventChoices(ep.Events), ep.URL
	}
	filter := r.URL.Query().Get("status")
	if filter != webhook.StatusSuccess && filter != webhook.StatusFailed {
		filter = ""
	}
	tabs := []Tab{{Label: "webhooks.log_all"}, {Label: "webhooks.log_success", Value: webhook.StatusSuccess},
		{Label: "webhooks.log_failed", Value: webhook.StatusFailed}}
	total := 0
	for i := range tabs {
		_, n, err := d.cfg.Stores.Webhooks.ListAttempts(ctx, m, ep.ID, webhook.AttemptFilter{Status: tabs[i].Value, Limit: 1})
		if err != nil {
			d.fail(w, r, c, err)
			return
		}
		tabs[i].Count = n
		if tabs[i].Value == filter {
			total = n
		}
	}
	data.Tabs = StatusTabs(r, "status", tabs)
	data.Pagination = NewPagination(r, logsPerPage, total)
	var err error
	data.Attempts, _, err = d.cfg.Stores.Webhooks.ListAttempts(ctx, m, ep.ID,
		webhook.AttemptFilter{Status: filter, Limit: data.Pagination.Limit(), Offset: data.Pagination.Offset()})
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.render(w, r, c, Page{Template: "webhook", Title: "webhooks.endpoint_title", Nav: "webhooks", Status: status, Data: data})
}

// editWebhook changes the URL and the events, by the API's rules.
func (d *Dashboard) editWebhook(w http.ResponseWriter, r *http.Request, c *Ctx) {
	ep, ok := d.findWebhook(w, r, c)
	if !ok {
		return
	}
	url := r.PostFormValue("url")
	patch := webhook.Patch{URL: &url, Events: submittedEvents(r)}
	if err := patch.Validate(d.cfg.Webhooks.AllowPrivateNetworks); err != nil {
		if !apperr.Is(err, apperr.Invalid) {
			d.fail(w, r, c, err)
			return
		}
		d.showWebhook(w, r, c, ep, webhookData{Events: eventChoices(patch.Events), URL: url, Alert: invalidKey(err)},
			http.StatusUnprocessableEntity)
		return
	}
	if _, err := d.cfg.Stores.Webhooks.UpdateWebhook(r.Context(), c.MerchantID(), ep.ID, patch); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "webhooks.saved_flash")
	http.Redirect(w, r, Prefix+"/webhooks/"+ep.ID.String(), http.StatusSeeOther)
}

// setWebhookActive disables or re-enables an endpoint (active=true|false);
// re-enabling clears why the dispatcher disabled it.
func (d *Dashboard) setWebhookActive(w http.ResponseWriter, r *http.Request, c *Ctx) {
	id, ok := ids.Parse(ids.Webhook, r.PathValue("id"))
	if !ok {
		d.notFound(w, r, c)
		return
	}
	active := r.PostFormValue("active") == "true"
	if _, err := d.cfg.Stores.Webhooks.UpdateWebhook(r.Context(), c.MerchantID(), id, webhook.Patch{IsActive: &active}); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, map[bool]string{true: "webhooks.enabled_flash", false: "webhooks.disabled_flash"}[active])
	http.Redirect(w, r, Prefix+"/webhooks/"+id.String(), http.StatusSeeOther)
}

func (d *Dashboard) confirmDeleteWebhook(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if ep, ok := d.findWebhook(w, r, c); ok {
		d.render(w, r, c, Page{Template: "webhook_delete", Title: "webhooks.delete_title", Nav: "webhooks",
			Data: webhookData{Endpoint: viewEndpoint(ep)}})
	}
}

func (d *Dashboard) deleteWebhook(w http.ResponseWriter, r *http.Request, c *Ctx) {
	id, ok := ids.Parse(ids.Webhook, r.PathValue("id"))
	if !ok {
		d.notFound(w, r, c)
		return
	}
	if err := d.cfg.Stores.Webhooks.DeleteWebhook(r.Context(), c.MerchantID(), id); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "webhooks.deleted_flash")
	http.Redirect(w, r, Prefix+"/webhooks", http.StatusSeeOther)
}

// rotateWebhookSecret answers with the endpoint's page showing the new
// secret, once; the old one keeps signing for webhook.RotationOverlap.
func (d *Dashboard) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, c *Ctx) {
	id, ok := ids.Parse(ids.Webhook, r.PathValue("id"))
	if !ok {
		d.notFound(w, r, c)
		return
	}
	ep, err := d.cfg.Stores.Webhooks.RotateWebhookSecret(r.Context(), c.MerchantID(), id, webhook.NewSecret(), webhook.RotationOverlap, d.now())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.showWebhook(w, r, c, ep, webhookData{NewSecret: ep.Secret}, http.StatusOK)
}

func (d *Dashboard) manual() *webhook.Manual {
	return &webhook.Manual{Sender: d.cfg.Webhooks.Sender, Store: d.cfg.Stores.Webhooks, Now: d.now}
}

// refuse answers 409 with a page saying why an endpoint cannot send.
func (d *Dashboard) refuse(w http.ResponseWriter, r *http.Request, c *Ctx, message string) {
	d.render(w, r, c, Page{Template: "error", Title: "webhooks.cannot_send", Nav: "webhooks", Status: http.StatusConflict,
		Data: errorData{Message: message}})
}

// testWebhook sends a webhook.test event now, as the API's test does, and
// shows the attempt's record.
func (d *Dashboard) testWebhook(w http.ResponseWriter, r *http.Request, c *Ctx) {
	ep, ok := d.findWebhook(w, r, c)
	if !ok {
		return
	}
	if !ep.IsActive {
		d.refuse(w, r, c, "webhooks.inactive")
		return
	}
	a, err := d.manual().SendTest(r.Context(), ep)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "webhooks.test_sent_flash")
	http.Redirect(w, r, Prefix+"/webhooks/"+ep.ID.String()+"/logs/"+a.ID.String(), http.StatusSeeOther)
}

// findAttempt returns the endpoint and its log record of the path.
func (d *Dashboard) findAttempt(w http.ResponseWriter, r *http.Request, c *Ctx) (*webhook.Endpoint, *webhook.Attempt, bool) {
	ep, ok := d.findWebhook(w, r, c)
	if !ok {
		return nil, nil, false
	}
	logID, ok := ids.Parse(ids.DeliveryLog, r.PathValue("log_id"))
	if !ok {
		d.notFound(w, r, c)
		return nil, nil, false
	}
	a, err := d.cfg.Stores.Webhooks.FindAttempt(r.Context(), c.MerchantID(), ep.ID, logID)
	if err != nil {
		d.fail(w, r, c, err)
		return nil, nil, false
	}
	return ep, a, true
}

// webhookLog shows one attempt: the event as sent (while it is kept) and
// the receiver's answer.
func (d *Dashboard) webhookLog(w http.ResponseWriter, r *http.Request, c *Ctx) {
	ep, a, ok := d.findAttempt(w, r, c)
	if !ok {
		return
	}
	data := webhookLogData{Endpoint: viewEndpoint(ep), Attempt: *a, PublicID: ids.Format(ids.DeliveryLog, a.ID)}
	_, payload, err := d.cfg.Stores.Webhooks.EventPayload(r.Context(), c.MerchantID(), a.EventID)
	switch {
	case err == nil:
		data.Request = indentJSON(payload)
	case !apperr.Is(err, apperr.NotFound):
		d.fail(w, r, c, err)
		return
	}
	d.render(w, r, c, Page{Template: "webhook_log", Title: "webhooks.log_title", Nav: "webhooks", Data: data})
}

// retryWebhookLog sends the record's event again now, as the API's retry
// does, and shows the new attempt.
func (d *Dashboard) retryWebhookLog(w http.ResponseWriter, r *http.Request, c *Ctx) {
	ep, rec, ok := d.findAttempt(w, r, c)
	if !ok {
		return
	}
	if !ep.IsActive {
		d.refuse(w, r, c, "webhooks.inactive")
		return
	}
	a, err := d.manual().Retry(r.Context(), ep, rec)
	if apperr.Is(err, apperr.InvalidState) {
		d.refuse(w, r, c, "webhooks.event_gone")
		return
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "webhooks.retried_flash")
	http.Redirect(w, r, Prefix+"/webhooks/"+ep.ID.String()+"/logs/"+a.ID.String(), http.StatusSeeOther)
}

// indentJSON returns a JSON document indented for reading, or as it is
// when it is not JSON.
func indentJSON(raw []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// ReasonKey is the catalogue key of why the dispatcher disabled the
// endpoint; "" when the merchant did.
func (e endpointView) ReasonKey() string {
	switch e.DisabledReason {
	case "":
		return ""
	case webhook.DisabledGone:
		return "webhooks.reason_gone"
	case webhook.DisabledFailing:
		return "webhooks.reason_failing"
	}
	return "webhooks.reason_other"
}
