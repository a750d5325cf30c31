package portal

import (
	"net/http"
	"strconv"
	"time"

	"github.com/convida/convida/pkg/portalaccess"
)

// referralsPerPage is how many referred sales a page lists.
const referralsPerPage = 20

type referralsData struct {
	Rows       []referralRow
	Page       int
	Prev, Next string // links to the pages around, "" when none
}

type referralRow struct {
	At     time.Time
	Buyer  string // first name and initial of the last
	Email  string // b***@example.com
	Amount int64
	Reward int64
	Status string // catalogue key
}

// referrals is the Referrals page: her referred sales, newest first, the
// buyer masked and never a document.
func (p *Portal) referrals(w http.ResponseWriter, r *http.Request, c *Ctx) {
	page, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || page < 1 || page > 100000 {
		page = 1
	}
	refs, err := p.cfg.Wallets.ListMemberReferrals(r.Context(), c.Merchant.ID, c.Member.ID)
	if err != nil {
		p.fail(w, r, c, err)
		return
	}
	data := referralsData{Page: page}
	from := (page - 1) * referralsPerPage
	for i := from; i < len(refs) && i < from+referralsPerPage; i++ {
		ref := refs[i]
		data.Rows = append(data.Rows, referralRow{At: ref.CreatedAt, Buyer: portalaccess.MaskName(ref.RefereeName),
			Email: portalaccess.MaskEmail(ref.RefereeEmail), Amount: ref.OrderValue, Reward: ref.RewardAmount,
			Status: "referral_status." + ref.Status})
	}
	if page > 1 {
		data.Prev = c.Base + "/referrals?page=" + strconv.Itoa(page-1)
	}
	if from+referralsPerPage < len(refs) {
		data.Next = c.Base + "/referrals?page=" + strconv.Itoa(page+1)
	}
	p.render(w, r, c, Page{Template: "referrals", Title: "referrals.title", Nav: "referrals", Data: data})
}
