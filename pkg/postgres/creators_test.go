package postgres_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

func TestCreatorProfileLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := mustTwoTenants(t, 1, 0)
	store := postgres.NewCreatorStore(a.pool, testenv.MustBox(t))
	m := a.members[0]
	in := creator.Profile{MerchantID: a.merchant.ID, MemberID: m.ID, DisplayName: "Ana Fit", Niche: "fitness", InstagramUsername: "ana.fit"}

	p, created, err := store.PutCreator(ctx, in)
	if err != nil || !created || len(p.Token) != 43 || p.DisplayName != "Ana Fit" || p.CreatedAt.IsZero() {
		t.Fatalf("PutCreator = %+v, %v, %v; want created with a token", p, created, err)
	}
	var hash, sealed []byte
	if err := a.pool.QueryRow(ctx, `SELECT token_hash, token_enc FROM creator_profiles WHERE member_id = $1`, m.ID).Scan(&hash, &sealed); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(hash, creator.HashToken(p.Token)) || bytes.Contains(sealed, []byte(p.Token)) {
		t.Errorf("stored hash %x, sealed %q: want the token's SHA-256 and the token sealed", hash, sealed)
	}

	in.DisplayName, in.Niche = "Ana Souza", ""
	upd, created, err := store.PutCreator(ctx, in)
	if err != nil || created || upd.Token != p.Token || upd.DisplayName != "Ana Souza" || upd.Niche != "" ||
		!upd.CreatedAt.Equal(p.CreatedAt) || !upd.UpdatedAt.After(p.UpdatedAt) {
		t.Errorf("PutCreator again = %+v, %v, %v; want updated, same token and creation", upd, created, err)
	}
	if got, err := store.FindCreatorByToken(ctx, p.Token); err != nil || got.MemberID != m.ID || got.MerchantID != a.merchant.ID {
		t.Errorf("FindCreatorByToken = %+v, %v", got, err)
	}

	rotated, err := store.RotateCreatorToken(ctx, a.merchant.ID, m.ID)
	if err != nil || rotated.Token == p.Token || len(rotated.Token) != 43 {
		t.Fatalf("RotateCreatorToken = %+v, %v", rotated, err)
	}
	if _, err := store.FindCreatorByToken(ctx, p.Token); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("the old token after rotation: %v, want not_found", err)
	}
	if got, err := store.FindCreator(ctx, a.merchant.ID, m.ID); err != nil || got.Token != rotated.Token {
		t.Errorf("FindCreator = %+v, %v; want the rotated token", got, err)
	}

	// Another merchant's member: nothing, and nothing created.
	if _, _, err := store.PutCreator(ctx, creator.Profile{MerchantID: b.merchant.ID, MemberID: m.ID, DisplayName: "X"}); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("PutCreator for another merchant's member = %v, want not_found", err)
	}
	for name, err := range map[string]error{
		"FindCreator": func() error { _, err := store.FindCreator(ctx, b.merchant.ID, m.ID); return err }(),
		"Rotate":      func() error { _, err := store.RotateCreatorToken(ctx, b.merchant.ID, m.ID); return err }(),
		"Delete":      store.DeleteCreator(ctx, b.merchant.ID, m.ID),
	} {
		if !apperr.Is(err, apperr.NotFound) {
			t.Errorf("%s by another merchant = %v, want not_found", name, err)
		}
	}

	if err := store.DeleteCreator(ctx, a.merchant.ID, m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := store.FindCreatorByToken(ctx, rotated.Token); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("a deleted creator's token: %v, want not_found", err)
	}
	if err := store.DeleteCreator(ctx, a.merchant.ID, m.ID); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("DeleteCreator again = %v, want not_found", err)
	}
}

// TestCreatorFiguresAndSales counts sales by status and month, and pages
// them newest first.
func TestCreatorFiguresAndSales(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := mustTwoTenants(t, 1, 1)
	m := a.members[0]
	nov := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	now := nov.AddDate(0, -1, 0)
	ledgerStore := postgres.NewLedgerStore(a.pool, func() time.Time { now = now.Add(time.Second); return now })
	credit := func(order string, amount int64) ledger.Command {
		return ledger.Command{ID: "guru:" + order + ":sale", Type: ledger.CmdCreditSale, MerchantID: a.merchant.ID, MemberID: m.ID,
			IssuedAt: nov, Sale: sale(order, amount, "b@example.com", nov)}
	}
	mustApply(t, ledgerStore, credit("oct", 1000)) // last month
	now = nov
	mustApply(t, ledgerStore, credit("n1", 2000))
	mustApply(t, ledgerStore, credit("n2", 3000))
	mustApply(t, ledgerStore, credit("n3", 4000))
	refund := credit("n3", 4000)
	refund.ID, refund.Type = "guru:n3:refund", ledger.CmdRefund
	mustApply(t, ledgerStore, refund)

	store := postgres.NewCreatorStore(a.pool, testenv.MustBox(t))
	f, err := store.CreatorFigures(ctx, a.merchant.ID, m.ID, creator.MonthStart(nov))
	if err != nil || f != (creator.Figures{TotalSales: 3, ApprovedSales: 0, MonthSales: 2}) {
		t.Errorf("CreatorFigures = %+v, %v; want 3 sales, 2 this month", f, err)
	}
	if f, err := store.CreatorFigures(ctx, b.merchant.ID, m.ID, creator.MonthStart(nov)); err != nil || f != (creator.Figures{}) {
		t.Errorf("CreatorFigures by another merchant = %+v, %v; want zeros", f, err)
	}

	amounts := func(offset, limit int) ([]int64, int) {
		sales, total, err := store.ListCreatorSales(ctx, a.merchant.ID, m.ID, offset, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, s := range sales {
			out = append(out, s.OrderValue)
		}
		return out, total
	}
	if got, total := amounts(0, 20); !slices.Equal(got, []int64{4000, 3000, 2000, 1000}) || total != 4 {
		t.Errorf("sales = %v of %d, want every status newest first, 4", got, total)
	}
	if got, total := amounts(1, 2); !slices.Equal(got, []int64{3000, 2000}) || total != 4 {
		t.Errorf("sales [1:3] = %v of %d", got, total)
	}
	if sales, total, err := store.ListCreatorSales(ctx, b.merchant.ID, m.ID, 0, 20); err != nil || total != 0 || len(sales) != 0 {
		t.Errorf("sales by another merchant = %d of %d, %v; want none", len(sales), total, err)
	}
}
