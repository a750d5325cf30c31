package merchant_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	valid := merchant.Merchant{Name: "Loja", StoreURL: "https://loja.example.com"}
	tests := []struct {
		name string
		edit func(m *merchant.Merchant)
		ok   bool
	}{
		{"a name and an https store URL are enough", func(*merchant.Merchant) {}, true},
		{"an http store URL is accepted", func(m *merchant.Merchant) { m.StoreURL = "http://loja.test:8080/shop" }, true},
		{"the name is required", func(m *merchant.Merchant) { m.Name = " " }, false},
		{"the store URL is required", func(m *merchant.Merchant) { m.StoreURL = "" }, false},
		{"the store URL is http(s)", func(m *merchant.Merchant) { m.StoreURL = "ftp://loja.example.com" }, false},
		{"the store URL has a host", func(m *merchant.Merchant) { m.StoreURL = "https://" }, false},
		{"a code prefix of 2 letters", func(m *merchant.Merchant) { m.CodePrefix = "AB" }, true},
		{"a code prefix of 8 letters", func(m *merchant.Merchant) { m.CodePrefix = "ABCDEFGH" }, true},
		{"a code prefix of 1 letter is too short", func(m *merchant.Merchant) { m.CodePrefix = "A" }, false},
		{"a code prefix of 9 letters is too long", func(m *merchant.Merchant) { m.CodePrefix = "ABCDEFGHI" }, false},
		{"a code prefix is letters A-Z only", func(m *merchant.Merchant) { m.CodePrefix = "AB1" }, false},
		{"a code prefix is upper case once normalized", func(m *merchant.Merchant) { m.CodePrefix = "ab" }, false},
		// The dashboard e-mail is one the sign-in form submits.
		{"a dashboard e-mail", func(m *merchant.Merchant) { m.DashboardEmail = "Ana.Souza+loja@Example.com" }, true},
		{"a dashboard e-mail at a host of one label", func(m *merchant.Merchant) { m.DashboardEmail = "owner@localhost" }, true},
		{"a dashboard e-mail with a display name", func(m *merchant.Merchant) { m.DashboardEmail = "Ana <ana@example.com>" }, false},
		{"a dashboard e-mail without a host", func(m *merchant.Merchant) { m.DashboardEmail = "ana" }, false},
		{"a dashboard e-mail at an IPv6 address", func(m *merchant.Merchant) { m.DashboardEmail = "owner@::1" }, false},
		{"a dashboard e-mail with an underscore in its host", func(m *merchant.Merchant) { m.DashboardEmail = "a@loja_x.com" }, false},
		{"a dashboard e-mail quoted", func(m *merchant.Merchant) { m.DashboardEmail = `"a b"@example.com` }, false},
		{"a dashboard e-mail of non-ASCII letters", func(m *merchant.Merchant) { m.DashboardEmail = "joão@example.com" }, false},
	}
	for _, tt := range tests {
		m := valid
		tt.edit(&m)
		err := m.Validate()
		if (err == nil) != tt.ok || (err != nil && !apperr.Is(err, apperr.Invalid)) {
			t.Errorf("%s: Validate(%+v) = %v", tt.name, m, err)
		}
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	m := merchant.Merchant{Name: " Loja ", StoreURL: " https://loja.example.com/x ", CodePrefix: " demo "}
	m.Normalize()
	if m.Name != "Loja" || m.StoreURL != "https://loja.example.com/x" || m.CodePrefix != "DEMO" ||
		m.DashboardEmail != "owner@loja.example.com" {
		t.Errorf("normalized %+v", m)
	}
	kept := merchant.Merchant{StoreURL: "https://loja.example.com", DashboardEmail: "me@example.com"}
	if kept.Normalize(); kept.DashboardEmail != "me@example.com" {
		t.Errorf("a given e-mail became %q", kept.DashboardEmail)
	}
}

type registrar struct {
	created  *merchant.Merchant
	password string
	keyErr   error
}

func (r *registrar) CreateMerchant(_ context.Context, m *merchant.Merchant, password string) error {
	m.ID = uuid.New()
	r.created, r.password = m, password
	return nil
}

func (r *registrar) CreateKey(_ context.Context, id uuid.UUID) (string, *merchant.Key, error) {
	if r.keyErr != nil {
		return "", nil, r.keyErr
	}
	plain, _, prefix := merchant.NewKey()
	return plain, &merchant.Key{MerchantID: id, Prefix: prefix}, nil
}

func TestRegister(t *testing.T) {
	t.Parallel()
	r := &registrar{}
	c, err := merchant.Register(context.Background(), r, &merchant.Merchant{Name: "Loja", StoreURL: "https://loja.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MerchantID != r.created.ID.String() || c.APIKey == "" || c.DashboardEmail != "owner@loja.example.com" ||
		c.DashboardPassword == "" || c.DashboardPassword != r.password {
		t.Errorf("credentials %+v for %+v", c, r.created)
	}
	if _, err := merchant.Register(context.Background(), &registrar{}, &merchant.Merchant{Name: "Loja"}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("an invalid merchant: %v, want invalid", err)
	}
	boom := errors.New("boom")
	if _, err := merchant.Register(context.Background(), &registrar{keyErr: boom}, &merchant.Merchant{Name: "Loja",
		StoreURL: "https://loja.example.com"}); !errors.Is(err, boom) {
		t.Errorf("a failed key: %v", err)
	}
}

func TestCredentialsFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "demo.json")
	c := merchant.Credentials{MerchantID: uuid.NewString(), APIKey: "k", DashboardEmail: "e@example.com", DashboardPassword: "p"}
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	got, err := merchant.ReadCredentials(path)
	if err != nil || got != c {
		t.Errorf("read %+v, %v; want %+v", got, err, c)
	}
}
