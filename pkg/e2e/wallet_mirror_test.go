package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

// balance is a wallet's pending and available cents.
type balance struct{ pending, available int64 }

// moneyDelivery is a money event as a merchant's receiver reads it.
type moneyDelivery struct {
	id, typ   string
	member    string // mem_…
	txnType   string // wallet.*: transaction.type
	amount    int64
	reference string // ref_… or red_…
	after     balance
	createdAt time.Time
}

func (d moneyDelivery) String() string {
	return fmt.Sprintf("%s %s %d %s → %d/%d", d.typ, d.txnType, d.amount, d.reference, d.after.pending, d.after.available)
}

// moneyDeliveries returns the money events (wallet.*, referral.approved)
// among rc's deliveries, each event id once.
func moneyDeliveries(t *testing.T, rc *receiver) []moneyDelivery {
	t.Helper()
	seen := map[string]bool{}
	var out []moneyDelivery
	num := func(m map[string]any, k string) int64 { f, _ := m[k].(float64); return int64(f) }
	bal := func(v any) balance {
		m, _ := v.(map[string]any)
		return balance{num(m, "pending"), num(m, "available")}
	}
	for _, g := range rc.received() {
		if seen[g.id] {
			continue
		}
		d := moneyDelivery{id: g.id, typ: g.typ, createdAt: g.createdAt}
		switch g.typ {
		case event.WalletCredited, event.WalletDebited:
			txn, _ := g.data["transaction"].(map[string]any)
			d.member, _ = g.data["member_id"].(string)
			d.txnType, _ = txn["type"].(string)
			d.amount = num(txn, "amount")
			d.reference, _ = txn["reference_id"].(string)
			d.after = bal(g.data["wallet"])
			if tb := bal(txn["balance_after"]); tb != d.after {
				t.Errorf("%s %s: transaction.balance_after %+v, wallet %+v", g.typ, g.id, tb, d.after)
			}
		case event.ReferralApproved:
			d.member, _ = g.data["member_id"].(string)
			d.amount = num(g.data, "reward_amount")
			d.reference, _ = g.data["id"].(string)
			if _, ok := g.data["balance_after"]; !ok {
				t.Errorf("referral.approved %s without balance_after: %v", g.id, g.data)
			}
			d.after = bal(g.data["balance_after"])
		default:
			continue
		}
		seen[g.id] = true
		out = append(out, d)
	}
	return out
}

// apply is docs/webhooks.md's "Mirroring a wallet", from the amount alone:
// a credit, and a cancel that is debited, move pending; every other
// transaction moves available; referral.approved moves reward_amount from
// pending to available.
func (b balance) apply(d moneyDelivery) balance {
	sign := int64(1)
	if d.typ == event.WalletDebited {
		sign = -1
	}
	switch {
	case d.typ == event.ReferralApproved:
		return balance{b.pending - d.amount, b.available + d.amount}
	case d.txnType == "credit", d.txnType == "cancel" && d.typ == event.WalletDebited:
		return balance{b.pending + sign*d.amount, b.available}
	}
	return balance{b.pending, b.available + sign*d.amount}
}

// chain finds an order of events, starting from an empty wallet, in which
// each event's balance_after is what its amount makes of the balance
// before it (deliveries are only loosely ordered, so it searches, trying
// the earliest created_at first). It returns false when there is none.
func chain(from balance, events []moneyDelivery) bool {
	if len(events) == 0 {
		return true
	}
	for i, e := range events {
		if from.apply(e) != e.after {
			continue
		}
		rest := slices.Concat(events[:i], events[i+1:])
		if chain(e.after, rest) {
			return true
		}
	}
	return false
}

// TestWalletMirror runs a merchant's program through every kind of money
// movement — sales, releases by the scheduler and by hand, refunds before
// and after approval (one with nothing left to take back), rejections of a
// pending and of an approved referral, redemptions completed and failed —
// for three members at once, and replays every money event its HTTPS
// endpoint received: each member's pending and available, rebuilt from the
// amounts alone, equal the API's, and each event's balance_after is the
// rebuilt balance right after it.
func TestWalletMirror(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{dispatcher: true, env: webhookEnv(t, map[string]string{
		"REDEMPTION_RETRY_DELAYS": "50ms", "ACTION_TIMEOUT": "60s"})})
	guru, yampi := newPlatform(t), newPlatform(t)
	guru.fail = func(_ int64, path string) int {
		if path == "/subscriptions/sub_fail" {
			return http.StatusUnprocessableEntity
		}
		return 0
	}
	rc := newReceiver(t, nil)
	tn := s.newTenant(campaign.Campaign{Name: "Dez por cento", RewardType: campaign.RewardPercentage, RewardValue: 10,
		WarrantyDays: 7, IsActive: true})
	s.hook(tn, rc, event.Subscribable...)
	for provider, body := range map[string]string{
		"guru":  `{"user_token": "guru-user-token", "api_url": "` + guru.srv.URL + `"}`,
		"yampi": `{"user_token": "yampi-ut", "user_secret_key": "yampi-usk", "store_alias": "loja", "api_url": "` + yampi.srv.URL + `"}`,
	} {
		if status, res := s.api(tn, http.MethodPut, "/integrations/"+provider, []byte(body)); status != 200 {
			t.Fatalf("PUT integration %s = %d %v", provider, status, res)
		}
	}
	members := []*member.Member{
		s.newMember(tn, "ana@example.com", "Ana Souza"),
		s.newMember(tn, "bia@example.com", "Bia Lima"),
		s.newMember(tn, "caio@example.com", "Caio Reis"),
	}
	order := func(m *member.Member, n int) string { return fmt.Sprintf("%s-%d", m.CouponCode, n) }
	totals := []float64{0, 100, 150, 200, 250, 120, 130, 140, 160} // by order number
	sales := func(from, to int) {
		for _, m := range members {
			for n := from; n <= to; n++ {
				wantStatus(t, s.postGuru(tn, guruSale(t, tn, order(m, n), m.CouponCode, totals[n], "approved")), 200)
			}
		}
	}
	refund := func(m *member.Member, n int) {
		wantStatus(t, s.postGuru(tn, guruSale(t, tn, order(m, n), m.CouponCode, totals[n], "refunded")), 200)
	}
	referral := func(m *member.Member, n int) string {
		var id uuid.UUID
		if err := s.deps.Pool.QueryRow(context.Background(), `SELECT id FROM referrals WHERE merchant_id = $1 AND order_id = $2`,
			tn.merchant.ID, order(m, n)).Scan(&id); err != nil {
			t.Fatalf("referral of %s: %v", order(m, n), err)
		}
		return ids.Format(ids.Referral, id)
	}
	action := func(path, body string, want int) {
		t.Helper()
		if status, res := s.api(tn, http.MethodPost, path, []byte(body)); status != want {
			t.Fatalf("POST %s %s = %d %v, want %d", path, body, status, res, want)
		}
	}
	waitAll := func(what string, want balance) {
		t.Helper()
		testenv.Eventually(t, 20*time.Second, what, func() bool {
			for _, m := range members {
				if b := s.balance(tn, m.Email); (balance{b.pending, b.available}) != want {
					return false
				}
			}
			return true
		})
	}
	release := func() {
		sched := program.NewScheduler(s.deps)
		defer sched.Close()
		sched.Now = func() time.Time { return s.clock.Now().AddDate(1, 0, 0) }
		if err := sched.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
	}

	// Each member: rewards of 1000, 1500, 2000 and 2500 released by the
	// scheduler, then 1200, 1300, 1400 and 1600 pending.
	sales(1, 4)
	waitAll("the first sales", balance{pending: 7000})
	release()
	waitAll("the warranty releases", balance{available: 7000})
	sales(5, 8)
	waitAll("the second sales", balance{pending: 5500, available: 7000})
	for _, m := range members {
		mem := ids.Format(ids.Member, m.ID)
		action("/referrals/"+referral(m, 5)+"/approve", `{}`, 200)                    // 1200 to available
		action("/referrals/"+referral(m, 6)+"/reject", `{"reason":"fraud"}`, 200)     // 1300 pending cancelled
		refund(m, 7)                                                                  // 1400 pending cancelled
		refund(m, 1)                                                                  // 1000 available reversed
		action("/referrals/"+referral(m, 2)+"/reject", `{"reason":"duplicate"}`, 200) // 1500 available reversed
		action("/members/"+mem+"/redeem", `{"amount":500,"type":"store_credit"}`, 200)
		action("/members/"+mem+"/redeem", `{"amount":700,"type":"subscription_discount","subscription_id":"sub_fail"}`, 422)
		action("/wallet/redeem", `{"email":"`+m.Email+`","amount":300,"destination":"billing_subscription","subscriptionId":"sub_1"}`, 200)
	}
	waitAll("the actions", balance{pending: 1600, available: 4900})
	for _, m := range members {
		action("/members/"+ids.Format(ids.Member, m.ID)+"/redeem", `{"amount":null,"type":"store_credit"}`, 200) // all 4900
		refund(m, 3)                                                                                             // approved, but nothing left to take back: no money event
	}
	testenv.Eventually(t, 20*time.Second, "the refunds after everything was redeemed", func() bool {
		return s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1 AND status = 'cancelled' AND unrecovered_amount = 2000`,
			tn.merchant.ID) == len(members)
	})
	release() // the last pending reward, 1600
	waitAll("the last release", balance{available: 1600})

	// Per member: 8 sales credited, 6 releases, 2 pending rewards and 2
	// approved ones taken out, 4 redemptions debited and 1 returned.
	const perMember = 8 + 6 + 4 + 4 + 1
	// Wait for them all (a missing one is reported per member below), then
	// a little more, so that a surplus shows too.
	for deadline := time.Now().Add(30 * time.Second); len(moneyDeliveries(t, rc)) < perMember*len(members) &&
		time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	got := moneyDeliveries(t, rc)
	byMember := map[string][]moneyDelivery{}
	for _, d := range got {
		byMember[d.member] = append(byMember[d.member], d)
	}
	for _, m := range members {
		mem := ids.Format(ids.Member, m.ID)
		events := byMember[mem]
		if len(events) != perMember {
			t.Errorf("%s: %d money events, want %d", m.Email, len(events), perMember)
		}
		var mirror balance
		for _, e := range events {
			mirror = mirror.apply(e)
		}
		api := s.balance(tn, m.Email)
		if want := (balance{api.pending, api.available}); mirror != want {
			t.Errorf("%s: rebuilt from the events %+v, the API says %+v", m.Email, mirror, want)
		}
		sort.SliceStable(events, func(i, j int) bool { return events[i].createdAt.Before(events[j].createdAt) })
		if !chain(balance{}, events) {
			t.Errorf("%s: no order of the events agrees with their balance_after:\n%v", m.Email, events)
		}
	}
	if len(byMember) != len(members) {
		t.Errorf("money events for %d members, want %d", len(byMember), len(members))
	}
	if err := checkLedger(s); err != nil {
		t.Error(err)
	}
}
