package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/secretbox"
)

// The stores implement the catalog interfaces.
var (
	_ httpapi.MemberCatalog   = (*postgres.MemberStore)(nil)
	_ httpapi.Campaigns       = (*postgres.CampaignStore)(nil)
	_ httpapi.ReferralCatalog = (*postgres.ReferralReads)(nil)
)

// catalogEnv is an apiEnv wired with the catalog, as program.APIRouter
// wires it, whose ledger runs on a clock the test sets: a referral's
// created_at is the ledger's now.
type catalogEnv struct {
	*apiEnv
	ledgerClock *clock
}

func mustCatalogEnv(tb testing.TB) *catalogEnv {
	tb.Helper()
	lclk := &clock{t: t0}
	env := mustEnvWith(tb, envOptions{
		wire: func(pool *pgxpool.Pool, _ *secretbox.Box) httpapi.Config {
			return httpapi.Config{Catalog: catalog(pool)}
		},
		ledgerNow: lclk.Now,
	})
	return &catalogEnv{apiEnv: env, ledgerClock: lclk}
}

// at sets the ledger's clock.
func (e *catalogEnv) at(t time.Time) { e.ledgerClock.Advance(t.Sub(e.ledgerClock.Now())) }

// ts parses an RFC 3339 timestamp or panics.
func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// listIDs returns the ids of data[] in order and fails on anything that is
// not a list envelope.
func listIDs(tb testing.TB, r reply) []string {
	tb.Helper()
	wantKeys(tb, r, "", "data", "pagination")
	wantKeys(tb, r, "pagination", "page", "per_page", "total", "total_pages")
	v, _ := at(r.json, "data")
	arr, ok := v.([]any)
	if !ok {
		tb.Fatalf("data is not an array; body %s", r.raw)
	}
	out := make([]string, len(arr))
	for i := range arr {
		out[i] = str(tb, r, "data."+strconv.Itoa(i)+".id")
	}
	return out
}

// wantPage checks the pagination object.
func wantPage(tb testing.TB, r reply, page, perPage, total, totalPages int) {
	tb.Helper()
	wantFields(tb, r, map[string]any{"pagination.page": page, "pagination.per_page": perPage,
		"pagination.total": total, "pagination.total_pages": totalPages})
}

// wantOnePage checks a 200 list answer that fits on the first page of 20:
// exactly the ids of want, in order, and the pagination that says so.
func wantOnePage(tb testing.TB, r reply, want []string) {
	tb.Helper()
	wantStatus(tb, r, http.StatusOK)
	if got := listIDs(tb, r); !slices.Equal(got, want) {
		tb.Errorf("ids = %v, want %v", got, want)
	}
	pages := 0
	if len(want) > 0 {
		pages = 1
	}
	wantPage(tb, r, 1, 20, len(want), pages)
}

// patchStep is one PATCH of a resource: its body (none when empty) and the
// fields of the answer it changes.
type patchStep struct {
	name, body string
	changes    map[string]any
}

// applyPatchSteps sends the steps to path in order and checks each answer:
// 200, exactly the keys of data, every field of state with the step's
// changes applied, an updated_at later than the step before, and a GET
// that answers the same. check, when not nil, looks further at each
// answer and may adjust state.
func (tn *tenant) applyPatchSteps(t *testing.T, path string, keys []string, state map[string]any, prevUpdated time.Time,
	steps []patchStep, check func(st patchStep, r reply)) {
	t.Helper()
	for _, st := range steps {
		var body any
		if st.body != "" {
			body = st.body
		}
		r := tn.do(t, http.MethodPatch, path, body)
		wantStatus(t, r, http.StatusOK)
		for k, v := range st.changes {
			state[k] = v
		}
		wantKeys(t, r, "", "data")
		wantKeys(t, r, "data", keys...)
		wantFields(t, r, state)
		if check != nil {
			check(st, r)
		}
		updated := ts(str(t, r, "data.updated_at"))
		if !updated.After(prevUpdated) {
			t.Errorf("%s: updated_at = %s, want after %s", st.name, updated, prevUpdated)
		}
		prevUpdated = updated
		if got := tn.get(t, path); !jsonEqual(got.json, r.json) {
			t.Errorf("%s: GET = %s, want the PATCH answer %s", st.name, got.raw, r.raw)
		}
	}
}

// listCase is a query of a list and the ids it must answer, in order, on
// one page.
type listCase struct {
	name, query string
	want        []string
}

// wantListCases runs each case as a parallel subtest: GET path+query
// answers exactly the ids wanted.
func (tn *tenant) wantListCases(t *testing.T, path string, cases []listCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantOnePage(t, tn.get(t, path+tt.query), tt.want)
		})
	}
}

// reversed returns s in reverse order.
func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// q encodes query parameters.
func q(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// jsonEqual reports whether two JSON documents (as decoded by reply) are
// the same.
func jsonEqual(a, b any) bool {
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}
