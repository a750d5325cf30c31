// Package dashboard is the merchant dashboard: server-rendered HTML pages
// under /dashboard, served by the API program (and so by standalone),
// working with JavaScript off and better with it on (htmx, vendored).
//
// The stack: html/template with the templates embedded and parsed once
// (New); a base layout (templates/_layout.html) with the navigation;
// plain forms with POST-redirect-GET; sessions in PostgreSQL through
// alexedwards/scs (cookie convida_session); a strict Content-Security-
// Policy, the standard library's CrossOriginProtection plus an Origin
// check on every state change, throttled sign-in, no-store everywhere.
// docs/dashboard.md explains the design.
//
// # Adding a page
//
// A page named p (say "members") is:
//
//   - pkg/dashboard/p.go: its handlers and a routes method,
//     func (d *Dashboard) membersRoutes(), called from registerRoutes in
//     dashboard.go.
//   - templates/p.html defining {{define "content"}}…{{end}}; the layout
//     wraps it. Texts come from the catalogue: {{t "members.title"}},
//     with the keys added to both locales/en.json and locales/pt-BR.json
//     (a count's words: {{plural "key" .N}} and CLDR plural forms); money with
//     {{money .Cents}}, times with {{date .At}}.
//   - A handler has the signature func(w, r, c *Ctx): c.User, c.Merchant,
//     c.Lang and c.Loc are the signed-in user, merchant, language and
//     time zone. Every store call is scoped by c.MerchantID(), so another
//     merchant's id is not found, and d.fail (or d.notFound) answers 404.
//   - Register pages to look at with d.page("GET /dashboard/p", h), and
//     every state change with d.action("POST /dashboard/p/...", h): action
//     refuses viewers (403 with a page saying so). Redirect after a POST
//     (303) and d.flash a message key.
//   - Render with d.render(w, r, c, Page{Template: "p", Title: "p.title",
//     Nav: "p", Data: data}). Lists use NewPagination (+ the template
//     "pagination"), StatusTabs (+ "tabs") and CSV (csv.go).
//   - A store the page needs is a small interface declared here, a field
//     of Config.Stores (config.go; a store another page reads already is
//     shared, not given again), filled by pkg/program (api.go,
//     apiWiring.dashboard) with the postgres store.
//   - Tests: a case in TestRenderEveryPage (render_test.go), HTTP tests on
//     newEnv (helpers_test.go) for 404 on another merchant's ids and 403
//     for a viewer's POST, and a browser test (browser_test.go) that
//     drives the page by its labels and button names.
package dashboard
