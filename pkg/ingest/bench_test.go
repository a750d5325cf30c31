package ingest_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/ingest"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/testenv"
)

// BenchmarkAcceptedSale times the request path of an attributed sale with
// warm caches: what the ingest spends of its own between the request and
// the publish (the broker is a counter here, the fast dedupe off, so
// that only the path's CPU and allocations are measured).
func BenchmarkAcceptedSale(b *testing.B) {
	pool := testenv.MustPool(b)
	box := testenv.MustBox(b)
	token := strings.Repeat("g", 40)
	m := testenv.MustMerchant(b, pool, box, merchant.Merchant{},
		merchant.Integration{Provider: provider.Guru, AccountToken: token})
	c := testenv.MustCampaign(b, pool, m.ID, testenv.FixedCampaign(500, 7))
	ana := &member.Member{MerchantID: m.ID, Email: "ana@example.com", Name: "Ana Souza", CampaignID: c.ID}
	if err := postgres.NewMemberStore(pool).CreateMember(context.Background(), ana, m.CodePrefix); err != nil {
		b.Fatal(err)
	}
	fixture, err := os.ReadFile("../inbound/testdata/guru/transaction-approved.json")
	if err != nil {
		b.Fatal(err)
	}
	body := bytes.ReplaceAll(fixture, []byte("REPLACE_WITH_THE_MERCHANT_ACCOUNT_TOKEN_40"), []byte(token))
	body = bytes.ReplaceAll(body, []byte("LOJ-ANA-K7PX"), []byte(ana.CouponCode))
	commands := &countingBus{}
	svc := ingest.New(ingest.Config{
		Merchants: postgres.NewMerchantStore(pool, box),
		Coupons:   postgres.NewMemberStore(pool),
		Publisher: commands,
	})
	r := mux.NewRouter()
	svc.Register(r)
	path := "/api/webhooks/guru/" + m.ID.String()
	serve := func() {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"accepted"`) {
			b.Fatalf("answer %d %s", w.Code, w.Body)
		}
	}
	serve() // warms the caches
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		serve()
	}
	if commands.n.Load() == 0 {
		b.Fatal("no command published")
	}
}

// countingBus plays the broker: it acknowledges every publish at once.
type countingBus struct{ n atomic.Int64 }

func (c *countingBus) PublishDelivery(_ context.Context, _ inbound.Delivery, cmd *ledger.Command) error {
	if cmd != nil {
		c.n.Add(1)
	}
	return nil
}
