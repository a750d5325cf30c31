// Package mailer sends e-mail through SMTP (github.com/wneessen/go-mail):
// the member portal's sign-in links. SMTP_URL names the server:
// smtp://user:pass@host:port uses STARTTLS when the server offers it and
// plain SMTP otherwise (unless TLS is required), smtps://… implicit TLS.
package mailer

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	mail "github.com/wneessen/go-mail"
)

// SMTP sends mail through one server.
type SMTP struct {
	host string
	opts []mail.Option
	from string
}

// New returns the sender of rawURL (SMTP_URL) from the address from
// (SMTP_FROM); requireTLS (SMTP_REQUIRE_TLS) refuses a server without
// STARTTLS. An empty rawURL is an error: the caller leaves mail out.
func New(rawURL, from string, requireTLS bool) (*SMTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "smtp" && u.Scheme != "smtps") {
		return nil, errors.New("SMTP_URL: must be smtp://[user:pass@]host[:port] or smtps://…")
	}
	if from == "" {
		return nil, errors.New("SMTP_FROM: is required with SMTP_URL")
	}
	opts := []mail.Option{mail.WithTimeout(20 * time.Second)}
	port := 25
	if u.Scheme == "smtps" {
		port = 465
		opts = append(opts, mail.WithSSL())
	} else if requireTLS {
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	} else {
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("SMTP_URL: bad port %q", p)
		}
	}
	opts = append(opts, mail.WithPort(port))
	if u.User != nil {
		pass, _ := u.User.Password()
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(u.User.Username()),
			mail.WithPassword(pass))
	}
	if _, err := mail.NewClient(u.Hostname(), opts...); err != nil {
		return nil, fmt.Errorf("SMTP_URL: %w", err)
	}
	return &SMTP{host: u.Hostname(), opts: opts, from: from}, nil
}

// Send sends a plain-text message to one recipient.
func (s *SMTP) Send(ctx context.Context, to, subject, text string) error {
	m := mail.NewMsg()
	if err := m.From(s.from); err != nil {
		return fmt.Errorf("mailer: from: %w", err)
	}
	if err := m.To(to); err != nil {
		return fmt.Errorf("mailer: to: %w", err)
	}
	m.Subject(subject)
	m.SetDate()
	m.SetMessageID()
	m.SetBodyString(mail.TypeTextPlain, text)
	// A client per message: sends run concurrently, each on its own
	// connection.
	c, err := mail.NewClient(s.host, s.opts...)
	if err != nil {
		return err
	}
	return c.DialAndSendWithContext(ctx, m)
}
