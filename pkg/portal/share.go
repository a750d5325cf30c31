package portal

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	qrcode "github.com/yeqown/go-qrcode/v2"

	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/provider"
)

type shareData struct {
	Code     string
	Link     string
	WhatsApp string
	Links    []platformLink // her links at the platforms that attribute by link
}

type platformLink struct{ Platform, Link string }

// link is the member's main referral link: the spec's referralLink.
func link(c *Ctx) string {
	return member.Link(c.Merchant.StoreURL, c.Merchant.ReferralParam, c.Member.CouponCode)
}

// share is the Share page: her code, her link, a copy button, a WhatsApp
// share link and the QR code of her link.
func (p *Portal) share(w http.ResponseWriter, r *http.Request, c *Ctx) {
	l := link(c)
	text := strings.ReplaceAll(texts.Text(c.Lang, "share.whatsapp_text"), "{store}", c.Merchant.Name) + " " + l
	data := shareData{Code: c.Member.CouponCode, Link: l,
		WhatsApp: "https://wa.me/?text=" + strings.ReplaceAll(url.QueryEscape(text), "+", "%20")}
	if p.cfg.Integrations != nil {
		checkouts, err := member.CheckoutsOf(r.Context(), p.cfg.Integrations, c.Merchant.ID)
		if err != nil {
			p.fail(w, r, c, err)
			return
		}
		links := c.Member.ReferralLinks(checkouts)
		for _, d := range provider.With(provider.Link) {
			if link := links[d.Name]; link != nil {
				data.Links = append(data.Links, platformLink{Platform: provider.TitleOf(d.Name), Link: *link})
			}
		}
	}
	p.render(w, r, c, Page{Template: "share", Title: "share.title", Nav: "share", Data: data})
}

// qr is the QR code of the member's link, as SVG.
func (p *Portal) qr(w http.ResponseWriter, r *http.Request, c *Ctx) {
	code, err := qrcode.New(link(c))
	if err != nil {
		p.fail(w, r, c, err)
		return
	}
	var svg svgWriter
	if err := code.Save(&svg); err != nil {
		p.fail(w, r, c, err)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	_, _ = w.Write([]byte(svg.b.String()))
}

// svgWriter draws a QR code's modules as one SVG path, with the quiet
// zone of four modules the standard asks for.
type svgWriter struct{ b strings.Builder }

func (s *svgWriter) Write(mat qrcode.Matrix) error {
	const quiet = 4
	bits := mat.Bitmap()
	size := len(bits) + 2*quiet
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges">`, size, size)
	fmt.Fprintf(&s.b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, size, size)
	for y, row := range bits {
		for x, on := range row {
			if on {
				fmt.Fprintf(&s.b, "M%d %dh1v1h-1z", x+quiet, y+quiet)
			}
		}
	}
	s.b.WriteString(`"/></svg>`)
	return nil
}

func (s *svgWriter) Close() error { return nil }
