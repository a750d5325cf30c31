package httpapi_test

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/postgres"
)

// The stores implement the catalog interfaces.
var (
	_ httpapi.MemberCatalog   = (*postgres.MemberStore)(nil)
	_ httpapi.CampaignCatalog = (*postgres.CampaignStore)(nil)
	_ httpapi.ReferralCatalog = (*postgres.ReferralReads)(nil)
)

var reRefID = regexp.MustCompile(`^ref_[0-9a-f]{32}$`)

// catalogEnv is an apiEnv wired with the catalog, as program.APIRouter
// wires it, whose ledger runs on a clock the test sets: a referral's
// created_at is the ledger's now.
type catalogEnv struct {
	*apiEnv
	ledgerClock *clock
}

func mustCatalogEnv(tb testing.TB) *catalogEnv {
	tb.Helper()
	pool, box := mustPoolAndBox(tb)
	clk, lclk := &clock{t: t0}, &clock{t: t0}
	ms := postgres.NewMerchantStore(pool, box)
	_, router := httpapi.New(withBase(tb, pool, ms, clk, httpapi.Config{
		Catalog: httpapi.CatalogConfig{
			Members:   postgres.NewMemberStore(pool),
			Campaigns: postgres.NewCampaignStore(pool),
			Referrals: postgres.NewReferralReads(pool),
		},
	}))
	srv := httptest.NewServer(router)
	tb.Cleanup(srv.Close)
	return &catalogEnv{
		apiEnv: &apiEnv{
			pool: pool, box: box, merchants: ms,
			ledger: postgres.NewLedgerStore(pool, lclk.Now),
			reads:  postgres.NewWalletReads(pool),
			clock:  clk, url: srv.URL, client: srv.Client(),
		},
		ledgerClock: lclk,
	}
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

// sameStrings reports whether got equals want element by element.
func sameStrings(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
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
