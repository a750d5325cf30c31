package topic_test

import (
	"crypto/sha256"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/topic"
	"github.com/convida/convida/pkg/webhook"
)

func TestCommandsRoundTrip(t *testing.T) {
	t.Parallel()
	cmd := ledger.Command{ID: "guru:1:sale", Type: ledger.CmdCreditSale, MerchantID: uuid.New(), MemberID: uuid.New(),
		IssuedAt: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC), Sale: &ledger.Sale{Source: "guru", OrderID: "1", Amount: 100}}
	m, err := topic.EncodeCommand(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Key) != cmd.MemberID.String() || m.Headers[topic.HeaderCommandType] != cmd.Type ||
		m.Headers[topic.HeaderMerchantID] != cmd.MerchantID.String() {
		t.Errorf("message key %q headers %v, want the member as key and the type and merchant as headers", m.Key, m.Headers)
	}
	got, err := topic.DecodeCommands([]kafkabus.Message{m})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].ID != cmd.ID || got[0].Sale.OrderID != "1" || !got[0].IssuedAt.Equal(cmd.IssuedAt) {
		t.Errorf("decoded %+v, want %+v", got[0], cmd)
	}
}

func TestDecodeCommandsRefusesPermanently(t *testing.T) {
	t.Parallel()
	for name, value := range map[string]string{"not JSON": "{", "no id": `{"type":"refund"}`, "no type": `{"id":"x"}`} {
		if _, err := topic.DecodeCommands([]kafkabus.Message{{Value: []byte(value)}}); !apperr.IsPermanent(err) {
			t.Errorf("%s: %v, want a permanent error", name, err)
		}
	}
}

func TestResultCommandSettlesTheRedemption(t *testing.T) {
	t.Parallel()
	red := &redemption.Redemption{ID: uuid.New(), MerchantID: uuid.New(), MemberID: uuid.New()}
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	cmd := topic.ResultCommand(redemption.Settlement{Redemption: red, At: at,
		Outcome: redemption.Outcome{RedemptionID: red.ID, FailureReason: "refused"}})
	if cmd.ID != ledger.ResultCommandID(red.ID) || cmd.Type != ledger.CmdRedemptionResult || cmd.MerchantID != red.MerchantID ||
		cmd.MemberID != red.MemberID || !cmd.IssuedAt.Equal(at) || cmd.Result == nil || cmd.Result.FailureReason != "refused" {
		t.Errorf("result command %+v", cmd)
	}
}

func TestEventsAreRoutedByType(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]string{event.RedemptionRequested: topic.Redemptions, event.WalletCredited: topic.Events} {
		rec := outbox.Record{MerchantID: uuid.New(), EventID: uuid.New(), MemberID: uuid.New(), Type: typ, Payload: []byte(`{}`)}
		m := topic.EventMessage(rec)
		if m.Topic != want || string(m.Key) != rec.MemberID.String() || m.Headers[topic.HeaderEventType] != typ ||
			m.Headers[topic.HeaderEventID] != rec.EventID.String() || m.Headers[topic.HeaderMerchantID] != rec.MerchantID.String() {
			t.Errorf("%s: message %+v, want topic %s with the event's headers", typ, m, want)
		}
	}
}

func TestDecodeRedemptionRequests(t *testing.T) {
	t.Parallel()
	req := redemption.Requested{RedemptionID: uuid.New(), MerchantID: uuid.New(), MemberID: uuid.New(),
		Type: redemption.TypeStoreCredit, Amount: 500}
	rec, err := outbox.NewRecord(req.MerchantID, req.MemberID, event.RedemptionRequested, req, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got, err := topic.DecodeRedemptionRequests([]kafkabus.Message{topic.EventMessage(rec)})
	if err != nil || len(got) != 1 || got[0] != req {
		t.Errorf("decoded %+v, %v; want %+v", got, err, req)
	}
	if _, err := topic.DecodeRedemptionRequests([]kafkabus.Message{{Value: []byte("nope")}}); !apperr.IsPermanent(err) {
		t.Errorf("undecodable: %v, want a permanent error", err)
	}
}

func TestSpecsCreateEveryTopicAndItsDeadLetter(t *testing.T) {
	t.Parallel()
	got := map[string]int{}
	for _, s := range topic.Specs(16) {
		got[s.Name] = s.Partitions
	}
	want := map[string]int{"ledger.commands": 16, "events": 16, "redemptions": 16, "inbound.deliveries": 16,
		"ledger.commands.dlq": 1, "events.dlq": 1, "redemptions.dlq": 1, "inbound.deliveries.dlq": 1}
	if len(got) != len(want) {
		t.Errorf("specs %v, want %v", got, want)
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: %d partitions, want %d", name, got[name], n)
		}
	}
}

func TestDeliveriesRoundTrip(t *testing.T) {
	t.Parallel()
	d := inbound.Delivery{ID: uuid.New(), MerchantID: uuid.New(), Provider: "guru", DedupeKey: "guru:1:sale",
		Outcome: inbound.DeliveryAccepted, HTTPStatus: 200, Headers: map[string]string{"User-Agent": "Guru"},
		Body: []byte(`{"api_token":"[REDACTED]"}`), ReceivedAt: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	m, err := topic.DeliveryMessage(d)
	if err != nil {
		t.Fatal(err)
	}
	if m.Topic != topic.Deliveries || string(m.Key) != d.MerchantID.String() || m.Headers[topic.HeaderMerchantID] != d.MerchantID.String() {
		t.Errorf("message topic %q key %q headers %v", m.Topic, m.Key, m.Headers)
	}
	// A refused delivery's record carries the digest and length of the
	// body it does not keep whole.
	sum := sha256.Sum256([]byte("forged"))
	refused := d
	refused.ID, refused.Outcome, refused.HTTPStatus, refused.Body = uuid.New(), inbound.DeliveryUnauthorized, 401, []byte("forg")
	refused.BodyLength, refused.BodySHA256 = 6, sum[:]
	m2, err := topic.DeliveryMessage(refused)
	if err != nil {
		t.Fatal(err)
	}
	got, err := topic.DecodeDeliveries([]kafkabus.Message{m, m2})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []inbound.Delivery{d, refused} {
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("decoded %+v, want %+v", got[i], want)
		}
	}
	for name, value := range map[string]string{"not JSON": "{", "no id": `{"merchant_id":"` + uuid.NewString() + `"}`} {
		if _, err := topic.DecodeDeliveries([]kafkabus.Message{{Value: []byte(value)}}); !apperr.IsPermanent(err) {
			t.Errorf("%s: %v, want a permanent error", name, err)
		}
	}
}

func TestEventsTopicCarriesEventsAndRetries(t *testing.T) {
	merchantID, webhookID, eventID := uuid.New(), uuid.New(), uuid.New()
	job := webhook.Job{MerchantID: merchantID, WebhookID: webhookID, EventID: eventID, EventType: "referral.created",
		Payload: []byte(`{"id":"evt_1"}`), Attempts: 2}
	retry, err := topic.RetryMessage(job)
	if err != nil {
		t.Fatal(err)
	}
	if retry.Topic != topic.Events || string(retry.Key) != webhookID.String() {
		t.Errorf("retry goes to %s keyed %s, want events keyed by its endpoint", retry.Topic, retry.Key)
	}
	ev := topic.EventMessage(outbox.Record{MerchantID: merchantID, EventID: eventID, Type: "referral.created",
		Payload: []byte(`{"id":"evt_1"}`)})
	noise := kafkabus.Message{Topic: topic.Events, Value: []byte(`{}`)} // no ids: not an event
	events, retries, err := topic.DecodeEvents([]kafkabus.Message{ev, noise, retry})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].MerchantID != merchantID || events[0].EventID != eventID ||
		events[0].Type != "referral.created" || string(events[0].Payload) != `{"id":"evt_1"}` {
		t.Errorf("events = %+v", events)
	}
	if len(retries) != 1 || retries[0].WebhookID != webhookID || retries[0].Attempts != 2 {
		t.Errorf("retries = %+v", retries)
	}
	bad := kafkabus.Message{Topic: topic.Events, Value: []byte(`{`), Headers: map[string]string{topic.HeaderKind: topic.KindRetry}}
	if _, _, err := topic.DecodeEvents([]kafkabus.Message{bad}); !apperr.IsPermanent(err) {
		t.Errorf("an undecodable retry: %v, want a permanent error", err)
	}
}

// An accepted delivery's record travels inside its command, body and all,
// and a record without an id or a merchant fails the message for good.
func TestCommandCarriesItsDelivery(t *testing.T) {
	t.Parallel()
	cmd, d := saleWithDelivery()
	m, err := topic.EncodeCommand(cmd)
	if err != nil {
		t.Fatal(err)
	}
	got, err := topic.DecodeCommands([]kafkabus.Message{m})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Delivery == nil || !reflect.DeepEqual(*got[0].Delivery, d) {
		t.Errorf("delivery decoded %+v, want %+v", got[0].Delivery, d)
	}
	got[0].Delivery, cmd.Delivery = nil, nil
	if !reflect.DeepEqual(got[0], cmd) {
		t.Errorf("command decoded %+v, want %+v", got[0], cmd)
	}
	bad := `{"id":"x","type":"credit_sale","delivery":{"merchant_id":"` + uuid.NewString() + `"}}`
	if _, err := topic.DecodeCommands([]kafkabus.Message{{Value: []byte(bad)}}); !apperr.IsPermanent(err) {
		t.Errorf("a delivery without id: %v, want a permanent error", err)
	}
}

func saleWithDelivery() (ledger.Command, inbound.Delivery) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	d := inbound.Delivery{ID: uuid.New(), MerchantID: uuid.New(), Provider: "guru", DedupeKey: "guru:1:sale",
		Outcome: inbound.DeliveryAccepted, HTTPStatus: 200, Headers: map[string]string{"User-Agent": "Guru", "Content-Type": "application/json"},
		Body: []byte(`{"api_token":"[REDACTED]","pad":"` + strings.Repeat("é\"x", 300) + `"}`), ReceivedAt: at}
	cmd := ledger.Command{ID: "guru:1:sale", Type: ledger.CmdCreditSale, MerchantID: d.MerchantID, MemberID: uuid.New(), IssuedAt: at,
		Sale: &ledger.Sale{Source: "guru", OrderID: "1", Amount: 9790, Currency: "BRL", CouponCode: "ANA-1234",
			BuyerName: "Bia", BuyerEmail: "bia@example.com", BuyerDocument: "12345678909", PaidAt: at}, Delivery: &d}
	return cmd, d
}

// BenchmarkCommandCodec: a sale's command with its delivery's record of
// about 1 KB, encoded and decoded (go test -bench CommandCodec ./pkg/topic/).
func BenchmarkCommandCodec(b *testing.B) {
	cmd, _ := saleWithDelivery()
	b.ReportAllocs()
	for b.Loop() {
		m, err := topic.EncodeCommand(cmd)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := topic.DecodeCommands([]kafkabus.Message{m}); err != nil {
			b.Fatal(err)
		}
	}
}
