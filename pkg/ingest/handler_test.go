package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/retry"
)

type oneMerchant struct{ token string }

func (m oneMerchant) FindMerchantByID(_ context.Context, id uuid.UUID) (*merchant.Merchant, error) {
	return &merchant.Merchant{ID: id}, nil
}

func (m oneMerchant) FindIntegration(_ context.Context, _ uuid.UUID, provider string) (*merchant.Integration, error) {
	return &merchant.Integration{Provider: provider, AccountToken: m.token}, nil
}

type anyCoupon struct{ member uuid.UUID }

func (c anyCoupon) FindMemberByCoupon(context.Context, uuid.UUID, string) (uuid.UUID, error) {
	return c.member, nil
}

// With the broker down an accepted sale answers 503 and a refused one its
// 4xx at once; both records are published, in order, once it is back.
func TestRecordsOfABrokerOutageArePublishedWhenItReturns(t *testing.T) {
	t.Parallel()
	token := strings.Repeat("g", 40)
	broker := &flakyBroker{down: true}
	svc := New(Config{Merchants: oneMerchant{token}, Coupons: anyCoupon{uuid.New()}, Publisher: broker, Log: zap.NewNop()})
	svc.pending.backoff = retry.Backoff{Base: time.Millisecond, Max: 5 * time.Millisecond}
	r := mux.NewRouter()
	svc.Register(r)
	url := "/api/webhooks/guru/" + uuid.NewString()
	post := func(body []byte) int {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodPost, url, bytes.NewReader(body)))
		return w.Code
	}
	raw, err := os.ReadFile("../inbound/testdata/guru/transaction-approved.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["api_token"] = token
	sale, _ := json.Marshal(doc)
	doc["api_token"] = strings.Repeat("x", 40)
	wrong, _ := json.Marshal(doc)

	start := time.Now()
	if got := post(sale); got != http.StatusServiceUnavailable {
		t.Errorf("sale with the broker down = %d, want 503", got)
	}
	if got := post(wrong); got != http.StatusUnauthorized {
		t.Errorf("wrong token = %d, want 401", got)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("answers took %v with the broker down", took)
	}
	if n := len(broker.published()); n != 0 {
		t.Fatalf("%d records published with the broker down", n)
	}
	broker.set(false)
	deadline := time.Now().Add(5 * time.Second)
	for len(broker.published()) < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := len(broker.published()); n != 2 {
		t.Fatalf("%d records published once the broker is back, want 2", n)
	}
	recs := broker.records()
	if recs[0].HTTPStatus != 503 || recs[0].Outcome != inbound.DeliveryUnavailable || recs[0].DedupeKey == "" ||
		recs[1].HTTPStatus != 401 || recs[1].Outcome != inbound.DeliveryUnauthorized ||
		bytes.Contains(recs[0].Body, []byte(token)) {
		t.Errorf("records %+v", recs)
	}
	if got := post(sale); got != http.StatusOK {
		t.Errorf("sale once the broker is back = %d, want 200", got)
	}
}
