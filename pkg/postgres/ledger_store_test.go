package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

func sale(order string, amount int64, buyer string, paid time.Time) *ledger.Sale {
	return &ledger.Sale{Source: "guru", OrderID: order, Amount: amount, Currency: "BRL", CouponCode: "X",
		BuyerName: "Bruno", BuyerEmail: buyer, PaidAt: paid}
}

// mustTenPercent seeds, on a fresh database, a merchant whose campaign
// rewards 10 % with a 7-day warranty, and n members.
func mustTenPercent(t *testing.T, n int) seeded {
	t.Helper()
	return mustSeed(t, testenv.MustPool(t), campaign.Campaign{Name: "Padrão", RewardType: campaign.RewardPercentage,
		RewardValue: 10, WarrantyDays: 7, IsActive: true}, n)
}

// firstSale seeds one member (mustTenPercent) and returns a store whose
// clock stands at now and the command of her first sale, at now.
func firstSale(t *testing.T) (s seeded, store *postgres.LedgerStore, credit ledger.Command, now time.Time) {
	t.Helper()
	s = mustTenPercent(t, 1)
	now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	store = postgres.NewLedgerStore(s.pool, func() time.Time { return now })
	credit = ledger.Command{ID: "guru:o1:sale", Type: ledger.CmdCreditSale, MerchantID: s.merchant.ID, MemberID: s.members[0].ID,
		IssuedAt: now, Sale: sale("o1", 9790, "bruno@example.com", now)}
	return s, store, credit, now
}

func TestLedgerLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, store, credit, now := firstSale(t)
	pool, m := s.pool, s.members[0]
	reads := postgres.NewWalletReads(pool)

	// The same command three times, twice in one batch: one effect.
	for _, batch := range [][]ledger.Command{{credit, credit}, {credit}} {
		if _, err := store.ApplyBatch(ctx, batch); err != nil {
			t.Fatalf("ApplyBatch: %v", err)
		}
	}
	wantWallet(t, reads, s, m.ID, ledger.Wallet{Pending: 979, TotalEarned: 979})

	refs, err := reads.ListMemberReferrals(ctx, s.merchant.ID, m.ID)
	if err != nil || len(refs) != 1 {
		t.Fatalf("referrals = %v, %v; want 1", refs, err)
	}
	if got, want := refs[0].WarrantyExpiresAt, now.Add(7*24*time.Hour); !got.Equal(want) {
		t.Errorf("warranty_expires_at = %v, want %v", got, want)
	}
	release := ledger.Command{ID: "release:" + refs[0].ID.String(), Type: ledger.CmdRelease, MerchantID: s.merchant.ID,
		MemberID: m.ID, ReferralID: refs[0].ID}
	release.IssuedAt = now.Add(6 * 24 * time.Hour)
	mustApply(t, store, release) // not due yet: nothing
	wantWallet(t, reads, s, m.ID, ledger.Wallet{Pending: 979, TotalEarned: 979})
	release.ID += ":later"
	release.IssuedAt = now.Add(8 * 24 * time.Hour)
	mustApply(t, store, release)
	wantWallet(t, reads, s, m.ID, ledger.Wallet{Available: 979, TotalEarned: 979})

	refund := ledger.Command{ID: "guru:o1:refund", Type: ledger.CmdRefund, MerchantID: s.merchant.ID, MemberID: m.ID,
		IssuedAt: now, Sale: sale("o1", 9790, "bruno@example.com", now)}
	mustApply(t, store, refund)
	wantWallet(t, reads, s, m.ID, ledger.Wallet{Cancelled: 979})
	txns, _ := reads.ListTransactions(ctx, s.merchant.ID, m.ID)
	if len(txns) != 1 || txns[0].Status != ledger.TxnReversed {
		t.Errorf("transactions = %+v, want one reversed credit", txns)
	}

	// Refund before sale: the later sale credits nothing.
	mustApply(t, store, ledger.Command{ID: "guru:o2:refund", Type: ledger.CmdRefund, MerchantID: s.merchant.ID,
		MemberID: m.ID, IssuedAt: now, Sale: sale("o2", 5000, "c@example.com", now)})
	mustApply(t, store, ledger.Command{ID: "guru:o2:sale", Type: ledger.CmdCreditSale, MerchantID: s.merchant.ID,
		MemberID: m.ID, IssuedAt: now, Sale: sale("o2", 5000, "c@example.com", now)})
	// Self-referral: created rejected, no credit.
	mustApply(t, store, ledger.Command{ID: "guru:o3:sale", Type: ledger.CmdCreditSale, MerchantID: s.merchant.ID,
		MemberID: m.ID, IssuedAt: now, Sale: sale("o3", 5000, m.Email, now)})
	wantWallet(t, reads, s, m.ID, ledger.Wallet{Cancelled: 979})
	refs, _ = reads.ListMemberReferrals(ctx, s.merchant.ID, m.ID)
	statuses := map[string]string{}
	for _, r := range refs {
		statuses[r.OrderID] = r.Status + "/" + r.RejectionReason
	}
	want := map[string]string{"o1": "cancelled/", "o2": "cancelled/", "o3": "rejected/self_referral"}
	for k, v := range want {
		if statuses[k] != v {
			t.Errorf("referral %s = %q, want %q", k, statuses[k], v)
		}
	}
	if err := postgres.CheckLedger(ctx, pool); err != nil {
		t.Fatal(err)
	}
	// Unknown member: recorded as rejected, the batch still commits.
	book, err := store.ApplyBatch(ctx, []ledger.Command{{ID: "x", Type: ledger.CmdCreditSale, MerchantID: s.merchant.ID,
		MemberID: uuid.New(), Sale: sale("o9", 1, "", now)}})
	if err != nil || len(book.Outcomes) != 1 || book.Outcomes[0].Status != ledger.OutcomeRejected {
		t.Fatalf("unknown member: %v %+v", err, book)
	}
}

func mustApply(t *testing.T, store *postgres.LedgerStore, cmds ...ledger.Command) *ledger.Book {
	t.Helper()
	book, err := store.ApplyBatch(context.Background(), cmds)
	if err != nil {
		t.Fatalf("ApplyBatch: %v", err)
	}
	return book
}

func wantWallet(t *testing.T, reads *postgres.WalletReads, s seeded, memberID uuid.UUID, want ledger.Wallet) {
	t.Helper()
	got, err := reads.FindWallet(context.Background(), s.merchant.ID, memberID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pending != want.Pending || got.Available != want.Available || got.TotalEarned != want.TotalEarned ||
		got.TotalRedeemed != want.TotalRedeemed || got.Cancelled != want.Cancelled {
		t.Errorf("wallet = pending %d available %d earned %d redeemed %d cancelled %d; want %d %d %d %d %d",
			got.Pending, got.Available, got.TotalEarned, got.TotalRedeemed, got.Cancelled,
			want.Pending, want.Available, want.TotalEarned, want.TotalRedeemed, want.Cancelled)
	}
}

// A transaction that created a member's wallet and rolled back leaves the
// store believing the wallet exists: the next batch of that member fails
// (retryable) instead of crediting without a locked wallet, and the one
// after it creates the wallet and credits once.
func TestLedgerWalletSeenInARolledBackTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, store, credit, _ := firstSale(t)
	pool, m := s.pool, s.members[0]

	rollback := errors.New("roll back")
	err := store.InTx(ctx, func(tx ledger.Tx) error {
		if err := tx.Load(ctx, ledger.NewBook(store.Now), []ledger.Command{credit}); err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatalf("InTx = %v, want the rollback", err)
	}
	if _, err := store.ApplyBatch(ctx, []ledger.Command{credit}); err == nil {
		t.Fatal("ApplyBatch after the rollback succeeded without the member's wallet")
	}
	if _, err := store.ApplyBatch(ctx, []ledger.Command{credit}); err != nil {
		t.Fatalf("ApplyBatch, retried: %v", err)
	}
	wantWallet(t, postgres.NewWalletReads(pool), s, m.ID, ledger.Wallet{Pending: 979, TotalEarned: 979})
}

// The recent referral times a wallet keeps (its velocity counts) are
// written from one array shared by the batch's wallets, each its own
// range: every member's are her referrals' times, to the microsecond, in
// order, whatever the neighbours in the batch hold.
func TestLedgerKeepsEachWalletsRecentReferralTimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenPercent(t, 3)
	pool := s.pool
	brt := time.FixedZone("BRT", -3*3600)
	clock := time.Date(2026, 11, 20, 9, 0, 0, 123456000, brt)
	store := postgres.NewLedgerStore(pool, func() time.Time { clock = clock.Add(1001 * time.Microsecond); return clock })
	saleOf := func(m, order string, member uuid.UUID) ledger.Command {
		return ledger.Command{ID: "guru:" + order + ":sale", Type: ledger.CmdCreditSale, MerchantID: s.merchant.ID, MemberID: member,
			IssuedAt: clock, Sale: sale(order, 9790, m+order+"@example.com", clock)}
	}
	a, b, c := s.members[0].ID, s.members[1].ID, s.members[2].ID
	mustApply(t, store, saleOf("a", "o1", a), saleOf("a", "o2", a), saleOf("b", "o3", b), saleOf("a", "o4", a))
	mustApply(t, store, saleOf("b", "o5", b), saleOf("c", "o6", c))
	for _, m := range []uuid.UUID{a, b, c} {
		var kept, created []time.Time
		if err := pool.QueryRow(ctx, `SELECT recent_referrals FROM wallets WHERE merchant_id = $1 AND member_id = $2`,
			s.merchant.ID, m).Scan(&kept); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(ctx, `SELECT array_agg(created_at ORDER BY created_at) FROM referrals WHERE merchant_id = $1 AND member_id = $2`,
			s.merchant.ID, m).Scan(&created); err != nil {
			t.Fatal(err)
		}
		if len(kept) != len(created) || len(kept) == 0 {
			t.Fatalf("member %s keeps %v, want her referrals' times %v", m, kept, created)
		}
		for i := range kept {
			if !kept[i].Equal(created[i]) {
				t.Errorf("member %s keeps %v, want %v", m, kept, created)
				break
			}
		}
	}
}
