package program

import (
	"fmt"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/mailer"
	"github.com/convida/convida/pkg/portal"
	"github.com/convida/convida/pkg/postgres"
)

// MailConfig is the SMTP server the member portal's sign-in e-mails go
// through (SMTP_URL, SMTP_FROM, SMTP_REQUIRE_TLS); an empty URL sends
// none, and the portal says sign-in by e-mail is not available.
type MailConfig struct {
	URL        string
	From       string
	RequireTLS bool
}

// mailSettings are the portal's settings, listed after the others.
var mailSettings = []Setting{
	{Name: "SMTP_URL", Meaning: "SMTP server of the member portal's sign-in e-mails: smtp://user:pass@host:port (STARTTLS when offered) or smtps://… (implicit TLS); empty: no e-mail sign-in",
		Programs: []string{"api"}},
	{Name: "SMTP_FROM", Meaning: "the From address of those e-mails (required with SMTP_URL)", Programs: []string{"api"}},
	{Name: "SMTP_REQUIRE_TLS", Default: "false", Meaning: "true refuses an smtp:// server that does not offer STARTTLS",
		Programs: []string{"api"}},
}

func init() { Settings = append(Settings, mailSettings...) }

// loadMail reads MailConfig; an SMTP_URL that does not parse stops the
// program at start.
func loadMail(get func(string) string) (MailConfig, error) {
	c := MailConfig{URL: get("SMTP_URL"), From: get("SMTP_FROM")}
	var err error
	if c.RequireTLS, err = strconv.ParseBool(get("SMTP_REQUIRE_TLS")); err != nil {
		return c, fmt.Errorf("SMTP_REQUIRE_TLS: want true or false, got %q", get("SMTP_REQUIRE_TLS"))
	}
	if c.URL != "" {
		if _, err := mailer.New(c.URL, c.From, c.RequireTLS); err != nil {
			return c, err
		}
	}
	return c, nil
}

// portalAPI is what the API's portal operations need.
func (w *apiWiring) portalAPI() httpapi.PortalConfig {
	return httpapi.PortalConfig{Tokens: postgres.NewPortalTokens(w.d.Pool), Settings: postgres.NewPortalSettings(w.d.Pool)}
}

// mountPortal serves the member's portal (/portal, /embed/portal) on r.
func (w *apiWiring) mountPortal(r *mux.Router) {
	d := w.d
	cfg := portal.Config{
		Merchants:    w.merchants,
		Members:      w.members,
		Wallets:      w.wallets,
		Campaigns:    w.campaigns,
		Integrations: w.merchants,
		Tokens:       postgres.NewPortalTokens(d.Pool),
		Settings:     postgres.NewPortalSettings(d.Pool),
		Sessions:     postgres.NewPortalSessionStore(d.Pool, w.now),
		SignIns:      postgres.NewPortalSignIns(d.Pool),
		// The ledger command the API and the dashboard run.
		Redeemer: ledger.Redeemer{Commands: d.Commands, Waiter: w.waiter, Redemptions: w.outcomes,
			Integrations: w.merchants},
		ActionTimeout:  d.Config.ActionTimeout,
		Log:            d.Log.Named("portal"),
		Now:            w.now,
		PublicURL:      d.Config.PublicURL,
		TrustedProxies: d.Config.TrustedProxies,
		Classify:       postgres.Classify,
	}
	if m := d.Config.Mail; m.URL != "" {
		sender, err := mailer.New(m.URL, m.From, m.RequireTLS)
		if err != nil {
			panic(err) // LoadConfig checked it
		}
		cfg.Mailer = sender
	}
	p, err := portal.New(cfg)
	if err != nil {
		panic(err) // the templates are embedded: a parse error is a build defect
	}
	p.Register(r)
}
