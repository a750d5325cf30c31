package privacy

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/fraud"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/referral"
)

// What an export shows of other people (docs/privacy.md, "Export"). The
// export is handed to the member, so it holds her data and nobody else's:
// the buyers of the sales she referred appear masked, and a sale she bought
// with another member's code does not name that member.

// Withheld replaces a buyer's document inside the merchant's notes of a
// referral her referrer exports.
const Withheld = "[withheld]"

// MaskName shows a person's name as its first word and the initial of its
// last: "Bruno Lima" → "Bruno L.", "maria da silva" → "maria S.". A
// one-word name stays as it is; "" stays "".
func MaskName(name string) string {
	words := strings.Fields(name)
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	initial, _ := utf8.DecodeRuneInString(words[len(words)-1])
	return words[0] + " " + string(unicode.ToUpper(initial)) + "."
}

// MadeView renders a referral she made (the referrer is the exporting
// member) as her export shows it: the administrative shape with its buyer
// masked — the e-mail as b***@example.com (creator.MaskEmail), the name as
// MaskName, no document — and the buyer's e-mail, name and document
// replaced the same way inside the merchant's notes (letter case ignored).
func MadeView(l referral.Listed) referral.View {
	v := l.AdminView()
	v.RefereeEmail = creator.MaskEmail(l.RefereeEmail)
	v.RefereeName = MaskName(l.RefereeName)
	v.RefereeExternalID = ""
	v.Notes, _ = replaceAll(l.Notes, buyerMasks(l.Referral))
	return v
}

// buyerMasks are the replacements of a referral's buyer in free text: her
// e-mail and name by their masks, her document (as the platform sent it,
// and as digits when it has MinDocumentDigits) by Withheld.
func buyerMasks(r referral.Referral) []replacement {
	email, name, doc := strings.TrimSpace(r.RefereeEmail), strings.TrimSpace(r.RefereeName), strings.TrimSpace(r.RefereeExternalID)
	out := []replacement{{email, creator.MaskEmail(email)}, {name, MaskName(name)}, {doc, Withheld}}
	if d := fraud.Digits(doc); len(d) >= MinDocumentDigits {
		out = append(out, replacement{d, Withheld})
	}
	return out
}

// Purchase is a referral whose buyer was the exporting member, as her
// export shows it: her order and what the platform reported of her as its
// buyer. Nothing of the referrer is in it (her id, name, e-mail, code,
// reward, the referral's status and review), nor the merchant's notes.
type Purchase struct {
	ID                string `json:"id"` // ref_…
	Source            string `json:"source"`
	OrderID           string `json:"order_id"`
	OrderValue        int64  `json:"order_value"`
	RefereeEmail      string `json:"referee_email"`
	RefereeName       string `json:"referee_name"`
	RefereeExternalID string `json:"referee_external_id"`
	CreatedAt         string `json:"created_at"`
}

// PurchaseOf renders r, a referral she bought with, as a Purchase.
func PurchaseOf(r referral.Referral) Purchase {
	return Purchase{ID: ids.Format(ids.Referral, r.ID), Source: r.Source, OrderID: r.OrderID, OrderValue: r.OrderValue,
		RefereeEmail: r.RefereeEmail, RefereeName: r.RefereeName, RefereeExternalID: r.RefereeExternalID,
		CreatedAt: jsontime.Format(r.CreatedAt)}
}
