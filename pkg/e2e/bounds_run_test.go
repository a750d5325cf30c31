package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/testenv"
)

// boundsRun is the stack TestRequestStringBounds drives, with its tenant.
type boundsRun struct {
	t      *testing.T
	s      *stack
	tn     *tenant
	ana    *member.Member
	api    *http.Client // validates every answer against the document
	ingest *http.Client
	seq    atomic.Int64
}

func (b *boundsRun) next() int64 { return b.seq.Add(1) }

func startBounds(t *testing.T) *boundsRun {
	t.Helper()
	s := startStack(t, stackOptions{})
	// Limits well above the test's pace.
	tn := s.withEduzz(s.withHotmartKiwify(s.newTenantWith(merchant.Merchant{RateLimitPerSecond: 10_000, RateLimitBurst: 10_000},
		testenv.FixedCampaign(1000, 7)), ""), "")
	v := openapitest.New(t)
	return &boundsRun{t: t, s: s, tn: tn, ana: s.newMember(tn, "ana@example.com", "Ana Souza"),
		api: v.Client(s.apiURL), ingest: v.Client(s.ingestURL)}
}

// servedDocument reads the document the API serves.
func (b *boundsRun) servedDocument() *openapi3.T {
	b.t.Helper()
	res, err := http.Get(b.s.apiURL + "/api/v1/openapi.json")
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		b.t.Fatalf("the served document does not load: %v", err)
	}
	return doc
}

// encode writes body as JSON without escaping <, > and &: a value of 180,000
// "<" is sent as 180,000 bytes.
func encode(body any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
	return bytes.TrimSpace(buf.Bytes())
}

// call sends a JSON body (none when nil) to the API with the tenant's key
// and returns the status and, for an error, its code and message.
func (b *boundsRun) call(method, path string, body any) (status int, code, msg string) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(encode(body))
	}
	req, _ := http.NewRequest(method, b.s.apiURL+path, rd)
	req.Header.Set("X-API-Key", b.tn.apiKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := b.api.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var out struct {
		Error struct{ Code, Message string }
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out.Error.Code, out.Error.Message
}

// deliver posts a platform's webhook (Yampi's, Kiwify's and Eduzz's signed) and returns the
// status and, for an error, its message.
func (b *boundsRun) deliver(platform string, body map[string]any) (int, string) {
	b.t.Helper()
	raw := encode(body)
	path := "/api/webhooks/" + platform + "/" + b.tn.merchant.ID.String()
	if platform == "kiwify" {
		path = kiwifyPath(b.tn, kiwifySign(b.tn.kiwifyToken, raw))
	}
	req, _ := http.NewRequest(http.MethodPost, b.s.ingestURL+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	switch platform {
	case "yampi":
		req.Header.Set("X-Yampi-Hmac-SHA256", yampiSign(b.tn.yampiSecret, raw))
	case "hotmart":
		req.Header.Set("X-HOTMART-HOTTOK", b.tn.hottok)
	case "eduzz":
		req.Header.Set("x-signature", eduzzSign(b.tn.eduzzSecret, raw))
	}
	res, err := b.ingest.Do(req)
	if err != nil {
		b.t.Fatalf("POST %s webhook: %v", platform, err)
	}
	defer res.Body.Close()
	var out struct {
		Error struct{ Message string }
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out.Error.Message
}

// snapshot digests what a request could store or publish: the rows of the
// resources and the number of events and processed commands.
func (b *boundsRun) snapshot() string {
	b.t.Helper()
	var out string
	q := `SELECT concat_ws('|', ` + strings.Join([]string{
		digest("members"), digest("campaigns"), digest("creator_profiles"), digest("campaign_tiers"),
		digest("webhook_endpoints"), digest("referrals"), digest("redemptions"), digest("wallets"),
		`(SELECT count(*) FROM outbox)::text`, `(SELECT count(*) FROM processed_commands)::text`,
	}, ", ") + `)`
	if err := b.s.deps.Pool.QueryRow(context.Background(), q).Scan(&out); err != nil {
		b.t.Fatal(err)
	}
	return out
}

func digest(table string) string {
	return `(SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM ` + table + ` t)`
}

// fixtureBody returns a platform's body from pkg/inbound/testdata as a map.
func (b *boundsRun) fixtureBody(name string, set map[string]any) map[string]any {
	var doc map[string]any
	if err := json.Unmarshal(fixture(b.t, name, set), &doc); err != nil {
		b.t.Fatal(err)
	}
	return doc
}

// pendingReferral makes a sale of Ana's through the ingest and returns its
// referral's id once the ledger has it, pending.
func (b *boundsRun) pendingReferral() string {
	b.t.Helper()
	order := fmt.Sprintf("bounds-ref-%d", b.next())
	wantStatus(b.t, b.s.postGuru(b.tn, guruSale(b.t, b.tn, order, b.ana.CouponCode, 100, "approved")), 200)
	var id string
	testenv.Eventually(b.t, 20*time.Second, "the referral of "+order, func() bool {
		err := b.s.deps.Pool.QueryRow(context.Background(),
			`SELECT id::text FROM referrals WHERE merchant_id = $1 AND order_id = $2`, b.tn.merchant.ID, order).Scan(&id)
		return err == nil
	})
	return "ref_" + strings.ReplaceAll(id, "-", "")
}

// once returns f's result, computed at the first call.
func once(f func() string) func() string {
	var v string
	return func() string {
		if v == "" {
			v = f()
		}
		return v
	}
}
