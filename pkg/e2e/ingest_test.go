package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/postgres"
)

func TestGuruSaleIsCredited(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{})
	tn := s.newTenant(campaign.Campaign{Name: "Padrão", RewardType: campaign.RewardPercentage, RewardValue: 10, WarrantyDays: 7, IsActive: true})
	m := s.newMember(tn, "ana@example.com", "Ana Souza")
	res := s.postGuru(tn, guruSale(t, tn, "order-1", m.CouponCode, 97.9, "approved"))
	if res.Status != 200 {
		t.Fatalf("POST guru = %d %s, want 200", res.Status, res.Body)
	}
	reads := postgres.NewWalletReads(s.deps.Pool)
	eventually(t, 10*time.Second, "pending credit of 979", func() bool {
		w, _ := reads.FindWallet(context.Background(), tn.merchant.ID, m.ID)
		return w.Pending == 979
	})
}
