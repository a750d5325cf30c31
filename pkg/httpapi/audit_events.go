package httpapi

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/respond"
)

// registerAuditEvents adds GET /audit-events when the trail is wired.
func (s *Server) registerAuditEvents(admin *mux.Router) {
	if s.cfg.Audit != nil {
		admin.HandleFunc(v1+"/audit-events", s.listAuditEvents).Methods(http.MethodGet)
	}
}

// AuditEvent is an event of the trail as the API shows it. Details name
// what a change touched (fields, a new role), never a secret's value.
type AuditEvent struct {
	ID        string         `json:"id"`
	Action    string         `json:"action"`
	Actor     AuditActor     `json:"actor"`
	Target    AuditTarget    `json:"target"`
	IP        *string        `json:"ip"`
	Details   map[string]any `json:"details"`
	CreatedAt string         `json:"created_at"`
}

// AuditActor is who acted: an API key (its id and first 8 characters), a
// dashboard user (id and e-mail) or the system (no id; "cli" for the
// bootstrap commands).
type AuditActor struct {
	Type  string  `json:"type"`
	ID    *string `json:"id"`
	Label *string `json:"label"`
}

// AuditTarget is what the action was done to.
type AuditTarget struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// listAuditEvents answers GET /audit-events: the merchant's events newest
// first, paginated like the other admin lists, of one action with
// ?action=.
func (s *Server) listAuditEvents(w http.ResponseWriter, r *http.Request) {
	pageNum, perPage, err := page(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	action := r.URL.Query().Get("action")
	if action != "" && !audit.Known(action) {
		s.fail(w, r, apperr.Errorf(apperr.Invalid, "action: must be one of %s", strings.Join(audit.Actions, ", ")))
		return
	}
	list, total, err := s.cfg.Audit.ListAuditEvents(r.Context(), merchantOf(r).ID,
		audit.Filter{Action: action, Offset: (pageNum - 1) * perPage, Limit: perPage})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, listOf(list, func(e *audit.Event) AuditEvent { return auditEventView(*e) }, pageNum, perPage, total))
}

func auditEventView(e audit.Event) AuditEvent {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	return AuditEvent{ID: ids.Format(ids.AuditEvent, e.ID), Action: e.Action,
		Actor:  AuditActor{Type: e.Actor.Type, ID: nilIfEmpty(e.Actor.ID), Label: nilIfEmpty(e.Actor.Label)},
		Target: AuditTarget{Type: e.Target.Type, ID: e.Target.ID}, IP: nilIfEmpty(e.IP), Details: details,
		CreatedAt: jsontime.Format(e.CreatedAt)}
}
