package ledger

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
)

// fixture drives one member's book through commands, as the ledger
// consumer would, and checks the wallet invariant of decision 18 after
// every command.
type fixture struct {
	t *testing.T
	b *Book
	m *member.Member
	c *campaign.Campaign
	n int // commands issued, for unique ids
	// events are those the last command emitted.
	events []Event
}

// newFixture returns an active member on an active 10 % campaign with a
// 7-day warranty and no minimum redemption.
func newFixture(t *testing.T) *fixture {
	b, m := newTestBook(true, member.StatusActive)
	return &fixture{t: t, b: b, m: m, c: b.Campaigns[ScopedID{m.MerchantID, m.CampaignID}]}
}

// apply applies cmd with a fresh id and returns its outcome.
func (f *fixture) apply(cmd Command) Outcome {
	f.t.Helper()
	f.n++
	if cmd.ID == "" {
		cmd.ID = "cmd-" + strconv.Itoa(f.n)
	}
	cmd.MerchantID, cmd.MemberID = f.m.MerchantID, f.m.ID
	if cmd.IssuedAt.IsZero() {
		cmd.IssuedAt = t0
	}
	before, eventsBefore := len(f.b.Outcomes), len(f.b.Events)
	f.b.Apply(cmd)
	f.events = f.b.Events[eventsBefore:]
	if w := f.wallet(); w.Available+w.Pending != w.TotalEarned-w.TotalRedeemed || w.Available < 0 || w.Pending < 0 {
		f.t.Fatalf("after %s: invariant broken: available %d + pending %d != earned %d - redeemed %d",
			cmd.Type, w.Available, w.Pending, w.TotalEarned, w.TotalRedeemed)
	}
	if len(f.b.Outcomes) == before {
		return Outcome{} // a repeated command id: skipped
	}
	return f.b.Outcomes[len(f.b.Outcomes)-1]
}

// sale credits a paid order of amount cents bought by bruno.
func (f *fixture) sale(order string, amount int64) Outcome {
	return f.apply(Command{Type: CmdCreditSale, Sale: &Sale{Source: "guru", OrderID: order, Amount: amount,
		BuyerEmail: "bruno@example.com", PaidAt: t0}})
}

func (f *fixture) refund(order string) Outcome {
	return f.apply(Command{Type: CmdRefund, Sale: &Sale{Source: "guru", OrderID: order, Amount: 10000, PaidAt: t0}})
}

// referral returns the order's referral.
func (f *fixture) referral(order string) *referral.Referral {
	f.t.Helper()
	r := f.b.Referrals[OrderKey{f.m.MerchantID, "guru", order}]
	if r == nil {
		f.t.Fatalf("no referral for order %s", order)
	}
	return r
}

// release releases the order's referral after its warranty.
func (f *fixture) release(order string) Outcome {
	return f.apply(Command{Type: CmdRelease, ReferralID: f.referral(order).ID, IssuedAt: t0.Add(8 * 24 * time.Hour)})
}

func (f *fixture) approve(order string) Outcome {
	return f.apply(Command{Type: CmdApprove, ReferralID: f.referral(order).ID, Notes: "checked"})
}

func (f *fixture) reject(order string) Outcome {
	return f.apply(Command{Type: CmdReject, ReferralID: f.referral(order).ID, Reason: "fraud"})
}

// redeem asks for amount cents (0 = all available) and returns the outcome
// and the redemption id.
func (f *fixture) redeem(amount int64) (Outcome, uuid.UUID) {
	id := uuid.New()
	return f.apply(Command{Type: CmdRedeem, Redeem: &Redeem{RedemptionID: id, Amount: amount, Type: redemption.TypeStoreCredit}}), id
}

// redemptionResult reports the platform's answer for the redemption.
func (f *fixture) redemptionResult(id uuid.UUID, success bool) Outcome {
	res := &redemption.Outcome{RedemptionID: id, Success: success}
	if !success {
		res.FailureReason = "platform refused"
	}
	return f.apply(Command{Type: CmdRedemptionResult, Result: res})
}

// wallet returns the member's wallet (zero when untouched).
func (f *fixture) wallet() Wallet {
	if w := f.b.Wallets[ScopedID{f.m.MerchantID, f.m.ID}]; w != nil {
		return *w
	}
	return Wallet{}
}

// figures are a wallet's public figures (decision 18).
type figures struct{ pending, available, earned, redeemed, cancelled int64 }

func (f *fixture) figures() figures {
	w := f.wallet()
	return figures{w.Pending, w.Available, w.TotalEarned, w.TotalRedeemed, w.Cancelled}
}

// txns returns the public transactions as "type:status", oldest first.
func (f *fixture) txns() []string {
	var out []string
	for _, t := range f.b.NewTransactions {
		out = append(out, t.Type+":"+t.Status)
	}
	return out
}
