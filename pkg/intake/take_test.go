package intake_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/segmentio/kafka-go"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/intake"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/topic"
)

// shop is a merchant with two members, Ana (whose Yampi coupon got the id
// 555) and Bia, and an intake on the real storage, Redis and broker.
type shop struct {
	merchant uuid.UUID
	ana, bia *member.Member
	in       intake.Intake
	brokers  []string
}

func newShop(t *testing.T) *shop {
	t.Helper()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	m := testenv.MustMerchant(t, pool, nil, merchant.Merchant{})
	c := testenv.MustCampaign(t, pool, m.ID, testenv.FixedCampaign(500, 7))
	s := &shop{merchant: m.ID}
	members := postgres.NewMemberStore(pool)
	s.ana = &member.Member{MerchantID: m.ID, Email: "ana@example.com", Name: "Ana Souza", CampaignID: c.ID}
	s.bia = &member.Member{MerchantID: m.ID, Email: "bia@example.com", Name: "Bia Lima", CampaignID: c.ID}
	for _, mem := range []*member.Member{s.ana, s.bia} {
		if err := members.CreateMember(ctx, mem, m.CodePrefix); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `INSERT INTO coupon_ids (merchant_id, platform, coupon_id, member_id) VALUES ($1, 'yampi', '555', $2)`,
		m.ID, s.ana.ID); err != nil {
		t.Fatal(err)
	}
	s.brokers = testenv.MustBroker(t)
	if err := kafkabus.EnsureTopics(ctx, s.brokers, topic.Specs(1)...); err != nil {
		t.Fatal(err)
	}
	bus := topic.NewCommandBus(kafkabus.NewWriter(kafkabus.WriterConfig{Brokers: s.brokers, Topic: topic.Commands}))
	t.Cleanup(func() { _ = bus.Close() })
	rdb := testenv.MustRedis(t)
	s.in = intake.Intake{Coupons: members, CouponIDs: postgres.NewCouponStore(pool), Publisher: bus,
		Dedupe: redisx.NewDedupe(rdb, redisx.NewBreaker(redisx.BreakerConfig{Ping: redisx.Probe(rdb)})), PublishTimeout: 10 * time.Second}
	return s
}

// The one ladder: the coupon's id, then (naming no one, the sale without
// a code) the code read from the order, then the coupon code, then the
// referral link's code.
func TestAttribute(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	ctx := context.Background()
	ana, bia := s.ana.CouponCode, s.bia.CouponCode
	readBia := func(context.Context) (string, error) { return bia, nil }
	unread := func(context.Context) (string, error) { t.Error("the order was read"); return "", nil }
	down := errors.New("the platform is down")
	for _, tc := range []struct {
		name string
		ev   inbound.OrderEvent
		read intake.CodeReader
		who  *member.Member // nil: no one
		code string
		err  error
	}{
		{"the coupon's id first", inbound.OrderEvent{CouponID: "555", CouponCode: bia}, unread, s.ana, ana, nil},
		{"an unknown id, the code read from the order", inbound.OrderEvent{CouponID: "999"}, readBia, s.bia, bia, nil},
		{"an unknown id, the sale's own code", inbound.OrderEvent{CouponID: "999", CouponCode: bia}, unread, s.bia, bia, nil},
		{"an unknown id, the order unreadable", inbound.OrderEvent{CouponID: "999"}, func(context.Context) (string, error) { return "", down },
			nil, "", down},
		{"an unknown id and nothing to read", inbound.OrderEvent{CouponID: "999"}, nil, nil, "", nil},
		{"a coupon naming no one, then the link's code", inbound.OrderEvent{CouponCode: "NOPE-1", ReferralCode: bia}, nil, s.bia, bia, nil},
		{"the link's code alone, in any case", inbound.OrderEvent{ReferralCode: strings.ToLower(ana)}, nil, s.ana, strings.ToLower(ana), nil},
		{"a coupon naming no one", inbound.OrderEvent{CouponCode: "NOPE-1"}, nil, nil, "", nil},
		{"no code at all", inbound.OrderEvent{}, unread, nil, "", nil},
	} {
		tc.ev.Provider = "yampi"
		a, err := s.in.Attribute(ctx, s.merchant, &tc.ev, tc.read)
		switch {
		case tc.err != nil:
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: %+v, %v; want %v", tc.name, a, err, tc.err)
			}
		case tc.who == nil:
			if !apperr.Is(err, apperr.NotFound) {
				t.Errorf("%s: %+v, %v; want no member", tc.name, a, err)
			}
		case err != nil || a.Member != tc.who.ID || a.Code != tc.code:
			t.Errorf("%s: %+v, %v; want %s by %q", tc.name, a, err, tc.who.Name, tc.code)
		}
	}
	// Without CouponIDs (the ingest's), a coupon's id is passed over.
	in := s.in
	in.CouponIDs = nil
	if a, err := in.Attribute(ctx, s.merchant, &inbound.OrderEvent{Provider: "yampi", CouponID: "555"}, unread); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("a coupon's id without CouponIDs: %+v, %v; want no member", a, err)
	}
}

// A webhook's sale and a pulled one, taken in: the record each is
// published with, its command, and the fast dedupe between them.
func TestTake(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	sale := func(order string, code, link string) *inbound.OrderEvent {
		return &inbound.OrderEvent{Provider: "kiwify", Kind: inbound.KindSale, OrderID: order, Amount: 9790, Currency: "BRL",
			CouponCode: code, ReferralCode: link, OccurredAt: at, DedupeKey: inbound.CommandID("kiwify", order, inbound.KindSale)}
	}
	take := func(ev *inbound.OrderEvent, source string) (*inbound.Delivery, intake.Taken) {
		t.Helper()
		d := &inbound.Delivery{ID: uuid.New(), MerchantID: s.merchant, Provider: "kiwify", ReceivedAt: at, Source: source}
		taken, err := s.in.Take(ctx, d, ev, nil)
		if err != nil {
			t.Fatalf("Take(%s): %v", ev.DedupeKey, err)
		}
		if d.DedupeKey != ev.DedupeKey || d.Outcome != taken.Outcome || d.HTTPStatus != 200 || d.Error != taken.Reason {
			t.Errorf("the record of %s: %+v, want %s", ev.DedupeKey, d, taken.Outcome)
		}
		return d, taken
	}
	want := func(taken intake.Taken, outcome, reason string, who *member.Member) {
		t.Helper()
		if taken.Outcome != outcome || taken.Reason != reason || who != nil && taken.Member != who.ID {
			t.Errorf("taken %+v, want %s %q", taken, outcome, reason)
		}
	}

	byLink, taken := take(sale("k1", "", s.bia.CouponCode), inbound.SourceWebhook)
	want(taken, inbound.DeliveryAccepted, "", s.bia)
	_, taken = take(sale("k1", "", s.bia.CouponCode), inbound.SourceWebhook)
	want(taken, inbound.DeliveryDuplicate, "already received", nil)

	// The pull finds a sale no webhook brought: its late webhook is a
	// duplicate at once. A pulled sale asks the ledger, not the fast path.
	pulled, taken := take(sale("k2", s.ana.CouponCode, ""), inbound.SourceReconciliation)
	want(taken, inbound.DeliveryAccepted, "", s.ana)
	_, taken = take(sale("k2", s.ana.CouponCode, ""), inbound.SourceWebhook)
	want(taken, inbound.DeliveryDuplicate, "already received", nil)
	_, taken = take(sale("k1", "", s.bia.CouponCode), inbound.SourceReconciliation)
	want(taken, inbound.DeliveryAccepted, "", s.bia)

	_, taken = take(sale("k3", "NOPE-1", "NOPE-2"), inbound.SourceWebhook)
	want(taken, inbound.DeliveryUnattributed, `no member has coupon "NOPE-1"`, nil)
	_, taken = take(sale("k4", "", "NOPE-2"), inbound.SourceWebhook)
	want(taken, inbound.DeliveryUnattributed, `no member has coupon "NOPE-2"`, nil)
	_, taken = take(sale("k5", "", ""), inbound.SourceWebhook)
	want(taken, inbound.DeliveryUnattributed, "no member has coupon (none)", nil)

	cmds := publishedCommands(t, s.brokers)
	if len(cmds) != 3 {
		t.Fatalf("commands published = %d, want 3 (the accepted sales)", len(cmds))
	}
	for i, w := range []struct {
		d      *inbound.Delivery
		who    *member.Member
		coupon string
	}{{byLink, s.bia, s.bia.CouponCode}, {pulled, s.ana, s.ana.CouponCode}} {
		c := cmds[i]
		if c.ID != w.d.DedupeKey || c.Type != ledger.CmdCreditSale || c.MemberID != w.who.ID || c.Sale.CouponCode != w.coupon ||
			c.Delivery == nil || c.Delivery.ID != w.d.ID || c.Delivery.Outcome != inbound.DeliveryAccepted || c.Delivery.Source != w.d.Source {
			t.Errorf("command %d: %+v (record %+v), want %s for %s with record %s", i, c, c.Delivery, w.d.DedupeKey, w.who.Name, w.d.ID)
		}
	}
}

// publishedCommands reads the commands on the broker's one partition of
// Commands.
func publishedCommands(t *testing.T, brokers []string) []ledger.Command {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic.Commands, Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	conn, err := kafka.DialLeader(context.Background(), "tcp", brokers[0], topic.Commands, 0)
	if err != nil {
		t.Fatal(err)
	}
	end, err := conn.ReadLastOffset()
	_ = conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var msgs []kafkabus.Message
	for int64(len(msgs)) < end {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("reading commands: %v", err)
		}
		msgs = append(msgs, kafkabus.Message{Offset: m.Offset, Value: m.Value})
	}
	cmds, err := topic.DecodeCommands(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return cmds
}
