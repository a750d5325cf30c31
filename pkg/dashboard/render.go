package dashboard

import (
	"embed"
	"html/template"
	"net/http"
	"time"
	_ "time/tzdata" // the merchants' time zones, also on hosts without zoneinfo

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/respond"
	"github.com/convida/convida/pkg/webpage"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Page is one rendering of a template inside the layout.
type Page struct {
	Template string // templates/<Template>.html, which defines "content"
	Title    string // catalogue key of the <title> (and usually the <h1>)
	Nav      string // the nav link marked current: "overview", "members", … "api_keys"
	Status   int    // 0 is 200
	Data     any    // what the template reads as .Data
}

// view is what a template executes on.
type view struct {
	*Ctx
	Page
	Path  string    // the request's path, for the language switch to come back to
	Flash string    // a catalogue key to show once
	Links []navLink // the main navigation, the current one marked
	// RequestID is the answer's X-Request-Id (set by the access log), which
	// an error page shows so that the merchant can quote it to support.
	RequestID string
}

type navLink struct {
	Key, Href string
	Current   bool
}

// navLinks are the main navigation, in order.
var navLinks = []navLink{
	{Key: "overview", Href: Prefix}, {Key: "members", Href: Prefix + "/members"},
	{Key: "referrals", Href: Prefix + "/referrals"}, {Key: "campaigns", Href: Prefix + "/campaigns"},
	{Key: "creators", Href: Prefix + "/creators"}, {Key: "redemptions", Href: Prefix + "/redemptions"},
	{Key: "integrations", Href: Prefix + "/integrations"}, {Key: "webhooks", Href: Prefix + "/webhooks"},
	{Key: "api_keys", Href: Prefix + "/settings/api-keys"},
}

// placeholderFuncs declares the functions render binds per request.
var placeholderFuncs = template.FuncMap{
	"t":              func(string) string { return "" },
	"plural":         func(string, int) string { return "" },
	"money":          func(int64) string { return "" },
	"date":           func(time.Time) string { return "" },
	"asset":          func(string) string { return "" },
	"count":          func(any) string { return "" },
	"dayField":       func(string) string { return "" },
	"dayPlaceholder": func() string { return "" },
	"decimal":        func(float64) string { return "" },
	"say":            func(string) template.HTML { return "" },
	"platform":       provider.TitleOf,
}

// views are the pages and assets, parsed once at start (webpage.Parse).
type views = webpage.Views

func parseViews() (*views, error) {
	return webpage.Parse(webpage.MustSub(templateFS, "templates"), webpage.MustSub(assetFS, "assets"), placeholderFuncs)
}

// render writes p inside the layout in c's language, with no-store (a
// page may show a secret, and none is worth caching). A rendering failure
// is a programming error: it is logged and answered 500.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, c *Ctx, p Page) {
	funcs := template.FuncMap{
		"t":              func(key string) string { return translate(c.Lang, key) },
		"plural":         func(key string, n int) string { return plural(c.Lang, key, n) },
		"money":          func(cents int64) string { return Money(c.Lang, cents) },
		"date":           func(at time.Time) string { return FormatDate(c.Lang, c.Loc, at) },
		"asset":          func(name string) string { return Prefix + "/assets/" + name + "?v=" + d.views.Assets[name] },
		"count":          func(n any) string { return Count(c.Lang, n) },
		"dayField":       func(iso string) string { return dayField(c.Lang, iso) },
		"dayPlaceholder": func() string { return dayPlaceholder(c.Lang) },
		"decimal":        func(f float64) string { return FormatDecimal(c.Lang, f) },
		"say":            func(text string) template.HTML { return say(c.Lang, text) },
	}
	v := view{Ctx: c, Page: p, Path: r.URL.Path, RequestID: w.Header().Get(accesslog.RequestIDHeader)}
	if c.User != nil {
		v.Flash = d.sessions.PopString(r.Context(), sessionFlash)
		for _, l := range navLinks {
			l.Current = l.Key == p.Nav
			v.Links = append(v.Links, l)
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	if err := d.views.Write(w, p.Template, funcs, v, p.Status); err != nil {
		d.log.Error("dashboard: render", zap.String("template", p.Template), zap.Error(err))
		http.Error(w, "internal error", http.StatusInternalServerError)
	}
}

// errorData is what templates/error.html shows: the catalogue key
// Message, or Text already in the reader's language.
type errorData struct{ Message, Text string }

// notFound answers 404 with a page; it is also the answer for another
// merchant's ids, so a page never tells them apart.
func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request, c *Ctx) {
	d.render(w, r, c, Page{Template: "error", Title: "error.not_found.title", Status: http.StatusNotFound,
		Data: errorData{Message: "error.not_found"}})
}

// fail answers an error from a store: apperr.NotFound is 404, an invalid
// input 400 saying which field and why in the reader's language, a database that does not answer
// (Config.Classify) 503 with Retry-After, anything else is logged and
// answered 500.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, c *Ctx, err error) {
	if c == nil {
		c = &Ctx{Lang: langFromHeader(r), Loc: defaultZone}
	}
	if d.cfg.Classify != nil {
		err = d.cfg.Classify(err)
	}
	switch {
	case apperr.Is(err, apperr.ServiceUnavailable):
		if d.outage.Due() { // one warning per 30 s, not one per page
			d.log.Warn("dashboard: the database does not answer: pages are answered 503 until it does", zap.Error(err))
		}
		w.Header().Set("Retry-After", respond.RetryAfter)
		d.render(w, r, c, Page{Template: "error", Title: "error.title", Status: http.StatusServiceUnavailable,
			Data: errorData{Message: "error.internal"}})
	case apperr.Is(err, apperr.NotFound):
		d.notFound(w, r, c)
	case apperr.Is(err, apperr.Invalid):
		d.render(w, r, c, Page{Template: "error", Title: "error.bad_request.title", Status: http.StatusBadRequest,
			Data: errorData{Text: problem(c.Lang, err)}})
	default:
		// The route's pattern, not the path: a path may hold an invitation token.
		d.log.Error("dashboard: request failed", zap.String("route", r.Pattern), zap.Error(err))
		d.render(w, r, c, Page{Template: "error", Title: "error.title", Status: http.StatusInternalServerError,
			Data: errorData{Message: "error.internal"}})
	}
}

// faviconHandler serves the dashboard's icon (assets/favicon.svg, which
// every page links) at /favicon.ico: an SVG, which browsers take there by
// its Content-Type.
func faviconHandler() http.Handler {
	icon, err := assetFS.ReadFile("assets/favicon.svg")
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		_, _ = w.Write(icon)
	})
}

// assetHandler serves the embedded assets (webpage.AssetHandler).
func assetHandler() http.Handler {
	return webpage.AssetHandler(webpage.MustSub(assetFS, "assets"), Prefix+"/assets/")
}
