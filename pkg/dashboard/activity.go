package dashboard

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
)

// Settings → Activity: the merchant's audit trail (pkg/audit), newest
// first, filtered by action, for owners only: it names who signed in from
// where, which a viewer has no need to see.

const activityPerPage = 50

type activityData struct {
	Rows       []activityRow
	Pagination Pagination
	Actions    []string // the filter's choices
	Action     string   // the filter's current action, "" for all
}

// activityRow is an event as the page shows it, in the page's language.
type activityRow struct {
	At                                      time.Time
	Action, Actor, Target, Details, Address string
}

func (d *Dashboard) activityRoutes() {
	d.page("GET "+Prefix+"/settings/activity", d.activity)
}

// activity is the Activity page: a viewer gets 403; ?action= of no known
// action is 400.
func (d *Dashboard) activity(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if !c.IsOwner() {
		d.render(w, r, c, Page{Template: "error", Title: "error.forbidden.title", Status: http.StatusForbidden,
			Data: errorData{Message: "activity.forbidden"}})
		return
	}
	action := r.URL.Query().Get("action")
	if action != "" && !audit.Known(action) {
		d.fail(w, r, c, apperr.Invalidf("action", apperr.RuleNotAllowed, "no such action"))
		return
	}
	// The page asked for is read, then read again as the last page when it
	// is past the end (the total comes with the read).
	page, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	f := audit.Filter{Action: action, Limit: activityPerPage, Offset: (page - 1) * activityPerPage}
	events, total, err := d.cfg.Stores.Audit.ListAuditEvents(r.Context(), c.MerchantID(), f)
	p := NewPagination(r, activityPerPage, total)
	if err == nil && p.Offset() != f.Offset {
		f.Offset = p.Offset()
		events, total, err = d.cfg.Stores.Audit.ListAuditEvents(r.Context(), c.MerchantID(), f)
		p = NewPagination(r, activityPerPage, total)
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	users, err := d.cfg.Stores.Users.ListUsers(r.Context(), c.MerchantID())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	emails := make(map[string]string, len(users))
	for _, u := range users {
		emails[u.ID.String()] = u.Email
	}
	data := activityData{Pagination: p, Actions: audit.Actions, Action: action, Rows: make([]activityRow, len(events))}
	for i, e := range events {
		data.Rows[i] = activityRowOf(c.Lang, e, emails)
	}
	d.render(w, r, c, Page{Template: "activity", Title: "activity.title", Nav: "activity", Data: data})
}

// activityRowOf words e in lang: the action, who acted (an API key by its
// first 8 characters, a user by e-mail, the system, a client not signed
// in), what on (a user by the e-mail the event names, else by the e-mail
// of the merchant's user of that id in emails), and the details (field
// names, roles, the digest of an e-mail tried).
func activityRowOf(lang string, e audit.Event, emails map[string]string) activityRow {
	row := activityRow{At: e.CreatedAt, Action: translate(lang, "activity.action."+e.Action), Address: e.IP}
	switch e.Actor.Type {
	case audit.ActorAPIKey:
		row.Actor = translate(lang, "activity.actor.api_key") + " " + e.Actor.Label
	case audit.ActorDashboardUser:
		row.Actor = e.Actor.Label
	case audit.ActorAnonymous:
		row.Actor = translate(lang, "activity.actor.anonymous")
	default:
		row.Actor = translate(lang, "activity.actor.system")
		if e.Actor.Label != "" {
			row.Actor += " (" + e.Actor.Label + ")"
		}
	}
	name := e.Target.ID
	if e.Target.Type == audit.TargetDashboardUser {
		if email, ok := e.Details["email"].(string); ok {
			name = email
		} else if email, ok := emails[e.Target.ID]; ok {
			name = email
		} else if e.Actor.Type == audit.ActorDashboardUser && e.Actor.ID == e.Target.ID {
			name = e.Actor.Label // a sign-in, a password change: the user themselves
		}
	}
	row.Target = translate(lang, "activity.target."+e.Target.Type) + " " + name
	row.Details = activityDetails(lang, e.Details)
	return row
}

// activityDetails words the details the stores write: the fields an
// update changed, a role change, the role of an invitation or a removal,
// a sign-in by invitation.
func activityDetails(lang string, details map[string]any) string {
	var parts []string
	if fields, ok := details["fields"].([]any); ok {
		names := make([]string, 0, len(fields))
		for _, f := range fields {
			if s, ok := f.(string); ok {
				names = append(names, s)
			}
		}
		parts = append(parts, translate(lang, "activity.details.fields")+" "+strings.Join(names, ", "))
	}
	from, _ := details["from"].(string)
	to, _ := details["to"].(string)
	if from != "" && to != "" {
		parts = append(parts, translate(lang, "role."+from)+" → "+translate(lang, "role."+to))
	} else if role, ok := details["role"].(string); ok {
		parts = append(parts, translate(lang, "activity.details.role")+" "+translate(lang, "role."+role))
	}
	if digest, ok := details["email_sha256"].(string); ok {
		parts = append(parts, translate(lang, "activity.details.email_tried")+" "+digest)
	}
	if details["via"] == "invitation" {
		parts = append(parts, translate(lang, "activity.details.invitation"))
	}
	return strings.Join(parts, "; ")
}
