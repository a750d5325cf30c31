package portal

import (
	"embed"
	"html/template"
	"net/http"
	"time"
	_ "time/tzdata" // the members' time zone, also on hosts without zoneinfo

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/l10n"
	"github.com/convida/convida/pkg/respond"
	"github.com/convida/convida/pkg/webpage"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

//go:embed locales/*.json
var localeFS embed.FS

// texts are the portal's texts, one file per language; a page adds its
// keys to both (TestPortalCatalogueComplete).
var texts = l10n.MustLoad(localeFS, "locales")

// Page is one rendering of a template inside the layout.
type Page struct {
	Template string // templates/<Template>.html, which defines "content"
	Title    string // catalogue key of the <title> and the <h1>
	Nav      string // the tab marked current: share, wallet, referrals, redeem
	Status   int    // 0 is 200
	Data     any
}

type view struct {
	*Ctx
	Page
	Path      string
	Nonce     string
	Tabs      []tab
	RequestID string
}

type tab struct {
	Key, Href string
	Current   bool
}

// views are the pages and assets, parsed once at start (webpage.Parse).
type views = webpage.Views

var placeholderFuncs = template.FuncMap{
	"t":     func(string) string { return "" },
	"money": func(int64) string { return "" },
	"date":  func(time.Time) string { return "" },
	"day":   func(time.Time) string { return "" },
	"asset": func(string) string { return "" },
}

func parseViews() (*views, error) {
	return webpage.Parse(webpage.MustSub(templateFS, "templates"), webpage.MustSub(assetFS, "assets"), placeholderFuncs)
}

// render writes pg inside the layout in c's language.
func (p *Portal) render(w http.ResponseWriter, r *http.Request, c *Ctx, pg Page) {
	funcs := template.FuncMap{
		"t":     func(key string) string { return texts.Text(c.Lang, key) },
		"money": func(cents int64) string { return l10n.Money(c.Lang, cents) },
		"date":  func(at time.Time) string { return l10n.FormatDate(c.Lang, c.Loc, at) },
		"day":   func(at time.Time) string { return l10n.FormatDay(c.Lang, c.Loc, at) },
		"asset": func(name string) string { return c.Base + "/assets/" + name + "?v=" + p.views.Assets[name] },
	}
	v := view{Ctx: c, Page: pg, Path: r.URL.Path, Nonce: nonceOf(r), RequestID: w.Header().Get(accesslog.RequestIDHeader)}
	if c.Member != nil {
		for _, k := range []string{"share", "wallet", "referrals", "redeem"} {
			href := c.Base + "/" + k
			if k == "share" {
				href = c.Base
			}
			v.Tabs = append(v.Tabs, tab{Key: k, Href: href, Current: k == pg.Nav})
		}
	}
	if c.Embedded && c.Member != nil {
		p.frameAncestors(w, r, c.Settings)
	}
	if err := p.views.Write(w, pg.Template, funcs, v, pg.Status); err != nil {
		p.log.Error("portal: render", zap.String("template", pg.Template), zap.Error(err))
		http.Error(w, "internal error", http.StatusInternalServerError)
	}
}

// messageData is what templates/message.html shows.
type messageData struct{ Message string }

// message answers status with a page of one title and one message.
func (p *Portal) message(w http.ResponseWriter, r *http.Request, c *Ctx, status int, title, message string) {
	p.render(w, r, c, Page{Template: "message", Title: title, Status: status, Data: messageData{Message: message}})
}

func (p *Portal) notFound(w http.ResponseWriter, r *http.Request, c *Ctx) {
	p.message(w, r, c, http.StatusNotFound, "error.not_found.title", "error.not_found")
}

// fail answers a store's error: not found 404, a database that does not
// answer 503 with Retry-After, anything else logged and 500.
func (p *Portal) fail(w http.ResponseWriter, r *http.Request, c *Ctx, err error) {
	if c == nil {
		c = &Ctx{Lang: p.langNoSession(r), Loc: defaultZone, Base: base(r), Embedded: embedded(r)}
	}
	if p.cfg.Classify != nil {
		err = p.cfg.Classify(err)
	}
	switch {
	case apperr.Is(err, apperr.ServiceUnavailable):
		if p.outage.Due() {
			p.log.Warn("portal: the database does not answer: pages are answered 503 until it does", zap.Error(err))
		}
		w.Header().Set("Retry-After", respond.RetryAfter)
		p.message(w, r, c, http.StatusServiceUnavailable, "error.title", "error.internal")
	case apperr.Is(err, apperr.NotFound):
		p.notFound(w, r, c)
	default:
		// The route's template, never the path: a path may hold a token.
		p.log.Error("portal: request failed", zap.String("route", r.Pattern), zap.Error(err))
		p.message(w, r, c, http.StatusInternalServerError, "error.title", "error.internal")
	}
}

// assetHandler serves the embedded assets under b+"/assets/".
func assetHandler(b string) http.Handler {
	return webpage.AssetHandler(webpage.MustSub(assetFS, "assets"), b+"/assets/")
}
