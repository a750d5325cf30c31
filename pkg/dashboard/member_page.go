package dashboard

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
)

// A member's page: wallet, transactions, ledger entries, referrals,
// redemptions, creator profile, coupons at the platforms; and her whole
// ledger, paginated.

// couponRow is one platform's coupon state on a member's page.
type couponRow struct {
	Platform string
	redemption.CouponState
}

type memberData struct {
	Member       *member.Member
	MemberID     string // mem_…
	CampaignName string
	Wallet       ledger.Wallet
	Transactions []ledger.Transaction
	Entries      []ledger.Entry
	EntriesTotal int
	Referrals    []referral.Listed
	Redemptions  []redemption.Listed
	Creator      *creator.Profile
	Coupons      []couponRow
	// ReferralLinks are the member's links at the platforms that
	// attribute a sale by its link (member.Member.ReferralLinks), those
	// set.
	ReferralLinks []referralLink
	// The redeem form: its one-time key (the redemption's name, so a form
	// sent twice redeems once; kept when the ledger did not answer in
	// time, so the retry is the same redemption), what was typed, and why
	// it was refused.
	RedeemKey, Amount, Type, SubscriptionID, Alert, AlertDetail string
}

func (d *Dashboard) memberPage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if ok {
		d.showMember(w, r, c, m, http.StatusOK, memberData{Type: redemption.TypeStoreCredit})
	}
}

// showMember renders the member's page with what form holds of the
// redeem form.
func (d *Dashboard) showMember(w http.ResponseWriter, r *http.Request, c *Ctx, m *member.Member, status int, form memberData) {
	ctx := r.Context()
	data := form
	data.Member, data.MemberID = m, ids.Format(ids.Member, m.ID)
	if data.RedeemKey == "" {
		data.RedeemKey = uuid.NewString()
	}
	var err error
	if data.Wallet, err = d.cfg.Stores.Wallets.FindWallet(ctx, m.MerchantID, m.ID); err != nil {
		d.fail(w, r, c, err)
		return
	}
	if data.Transactions, err = d.cfg.Stores.Wallets.ListTransactions(ctx, m.MerchantID, m.ID); err != nil {
		d.fail(w, r, c, err)
		return
	}
	data.Transactions = data.Transactions[:min(len(data.Transactions), memberDetailRows)]
	if data.Entries, data.EntriesTotal, err = d.cfg.Stores.Wallets.ListEntries(ctx, m.MerchantID, m.ID,
		ledger.EntryFilter{Limit: memberDetailRows}); err != nil {
		d.fail(w, r, c, err)
		return
	}
	if data.Referrals, _, err = d.cfg.Stores.Referrals.ReferralsPage(ctx, m.MerchantID,
		referral.Filter{MemberID: m.ID, Limit: memberDetailRows}); err != nil {
		d.fail(w, r, c, err)
		return
	}
	if data.Redemptions, _, err = d.cfg.Stores.Redemptions.RedemptionsPage(ctx, m.MerchantID,
		redemption.Filter{MemberID: m.ID, Limit: memberDetailRows}); err != nil {
		d.fail(w, r, c, err)
		return
	}
	switch p, err := d.cfg.Stores.Creators.FindCreator(ctx, m.MerchantID, m.ID); {
	case err == nil:
		data.Creator = p
	case !apperr.Is(err, apperr.NotFound):
		d.fail(w, r, c, err)
		return
	}
	states, err := d.cfg.Stores.Coupons.CouponStates(ctx, m.MerchantID, []uuid.UUID{m.ID})
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	for _, p := range redemption.CouponPlatforms {
		st, ok := states[m.ID][p]
		if !ok {
			st = redemption.CouponState{Status: redemption.CouponNotConfigured}
		}
		data.Coupons = append(data.Coupons, couponRow{Platform: p, CouponState: st})
	}
	checkouts, err := member.CheckoutsOf(ctx, d.cfg.Stores.Merchants, m.MerchantID)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	links := m.ReferralLinks(checkouts)
	for _, p := range provider.With(provider.Link) {
		if link := links[p.Name]; link != nil {
			data.ReferralLinks = append(data.ReferralLinks, referralLink{Platform: p.Name, Link: *link})
		}
	}
	campaigns, err := d.cfg.Stores.Campaigns.CampaignChoices(ctx, m.MerchantID)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	for _, camp := range campaigns {
		if camp.ID == m.CampaignID {
			data.CampaignName = camp.Name
		}
	}
	d.render(w, r, c, Page{Template: "member", Title: "members.member_title", Nav: "members", Status: status, Data: data})
}

// entriesPerPage is the length of a member's ledger pages.
const entriesPerPage = 50

type memberLedgerData struct {
	Member     *member.Member
	Entries    []ledger.Entry
	Pagination Pagination
}

// memberLedger is every ledger entry of the member, newest first, paginated.
func (d *Dashboard) memberLedger(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if !ok {
		return
	}
	page, offset := requestPage(r, entriesPerPage)
	entries, total, err := d.cfg.Stores.Wallets.ListEntries(r.Context(), m.MerchantID, m.ID, ledger.EntryFilter{Offset: offset, Limit: entriesPerPage})
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	p := NewPagination(r, entriesPerPage, total)
	p.Page = page
	d.render(w, r, c, Page{Template: "member_ledger", Title: "members.ledger", Nav: "members",
		Data: memberLedgerData{Member: m, Entries: entries, Pagination: p}})
}

// referralLink is a member's referral link at one platform.
type referralLink struct{ Platform, Link string }
