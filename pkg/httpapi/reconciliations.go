package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/respond"
)

// ReconcileConfig wires /integrations/{provider}/reconcile and
// /reconciliations; a nil Reconciler or Runs leaves them out.
type ReconcileConfig struct {
	Reconciler reconcile.Starter
	Runs       reconcile.Runs
	// Window is a run's span when the request names none
	// (RECONCILE_WINDOW).
	Window time.Duration
}

// ReconciliationView is a run as the API shows it.
type ReconciliationView struct {
	ID         string  `json:"id"`
	Provider   string  `json:"provider"`
	Status     string  `json:"status"`
	From       string  `json:"from"`
	To         string  `json:"to"`
	StartedAt  string  `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
	Seen       int     `json:"seen"`
	Missing    int     `json:"missing"`
	Credited   int     `json:"credited"`
	Reversed   int     `json:"reversed"`
	Error      string  `json:"error"`
}

// ReconcileRequest is the optional body of POST
// /integrations/{provider}/reconcile.
type ReconcileRequest struct {
	From *string `json:"from"`
	To   *string `json:"to"`
}

func (s *Server) registerReconciliations(admin *mux.Router) {
	c := s.cfg.Reconcile
	if c.Reconciler == nil || c.Runs == nil {
		return
	}
	admin.HandleFunc(v1+"/integrations/{provider}/reconcile", s.reconcile).Methods(http.MethodPost)
	admin.HandleFunc(v1+"/integrations/{provider}/reconciliations", s.listReconciliations).Methods(http.MethodGet)
}

// reconcile records a run of the integration, which the leading
// scheduler starts at its next tick, and answers 202 with it (and writes
// its audit event). Within RECONCILE_COOLDOWN of the start of the
// integration's last run it is 429 rate_limited with Retry-After.
func (s *Server) reconcile(w http.ResponseWriter, r *http.Request) {
	d, err := platformOf(r)
	if err == nil && !d.Can(provider.Pull) {
		err = apperr.Errorf(apperr.Unprocessable, "%s sales cannot be reconciled: %s", d.Title, d.NoPull)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := d.Name
	var req ReconcileRequest
	if err := decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	from, to, err := s.reconcileWindow(req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	m := merchantOf(r)
	in, err := s.cfg.Merchants.FindIntegration(r.Context(), m.ID, p)
	if apperr.Is(err, apperr.NotFound) {
		err = apperr.Errorf(apperr.IntegrationNotConfigured, "the %s integration is not configured", p)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	run, err := s.cfg.Reconcile.Reconciler.Begin(r.Context(), m.ID, *in, from, to, false)
	if wait := reconcile.RetryAfter(err); wait > 0 {
		// Within RECONCILE_COOLDOWN of the last run's start: 429, and
		// when to ask again.
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusAccepted, map[string]any{"data": reconciliationView(run)})
}

// reconcileWindow reads the request's window: RFC 3339 ends, to defaulting
// to now and from to to minus the configured window.
func (s *Server) reconcileWindow(req ReconcileRequest) (from, to time.Time, err error) {
	to = s.cfg.Now().UTC()
	if req.To != nil {
		if to, err = windowEnd("to", *req.To); err != nil {
			return from, to, err
		}
	}
	window := s.cfg.Reconcile.Window
	if window <= 0 {
		window = 72 * time.Hour
	}
	from = to.Add(-window)
	if req.From != nil {
		if from, err = windowEnd("from", *req.From); err != nil {
			return from, to, err
		}
	}
	return from, to, nil
}

// maxWindowEnd bounds the text of a window's end (the document's
// maxLength): an RFC 3339 time is about 30 characters.
const maxWindowEnd = 64

// windowEnd reads the RFC 3339 time of the body field named field.
func windowEnd(field, text string) (time.Time, error) {
	if utf8.RuneCountInString(text) > maxWindowEnd {
		return time.Time{}, apperr.Errorf(apperr.Invalid, "%s: must be at most %d characters", field, maxWindowEnd)
	}
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return time.Time{}, apperr.Errorf(apperr.Invalid, "%s: must be an RFC 3339 time", field)
	}
	return t, nil
}

func (s *Server) listReconciliations(w http.ResponseWriter, r *http.Request) {
	p, pageNum, perPage, err := providerPage(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, total, err := s.cfg.Reconcile.Runs.PageRuns(r.Context(), merchantOf(r).ID, p, (pageNum-1)*perPage, perPage)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, listOf(list, func(run *reconcile.Run) ReconciliationView { return reconciliationView(*run) }, pageNum, perPage, total))
}

func reconciliationView(run reconcile.Run) ReconciliationView {
	v := ReconciliationView{ID: ids.Format(ids.Reconciliation, run.ID), Provider: run.Provider, Status: run.Status,
		From: jsontime.Format(run.From), To: jsontime.Format(run.To), StartedAt: jsontime.Format(run.StartedAt),
		Seen: run.Seen, Missing: run.Missing, Credited: run.Credited, Reversed: run.Reversed, Error: run.Error}
	if !run.FinishedAt.IsZero() {
		f := jsontime.Format(run.FinishedAt)
		v.FinishedAt = &f
	}
	return v
}
