package merchant

import (
	"context"
	"encoding/json"
	"os"

	"github.com/google/uuid"
)

// Credentials are what a new merchant is given: its id, first API key and
// dashboard login. The key and the password are shown once and never
// stored in clear.
type Credentials struct {
	MerchantID        string `json:"merchant_id"`
	APIKey            string `json:"api_key"`
	DashboardEmail    string `json:"dashboard_email"`
	DashboardPassword string `json:"dashboard_password"`
}

// Registrar stores merchants and their keys (postgres.MerchantStore).
type Registrar interface {
	CreateMerchant(ctx context.Context, m *Merchant, password string) error
	CreateKey(ctx context.Context, merchantID uuid.UUID) (plain string, k *Key, err error)
}

// Register creates m, normalized and validated (an apperr.Invalid error
// when it breaks a rule), with a fresh dashboard password and its first
// API key, and returns the credentials.
func Register(ctx context.Context, r Registrar, m *Merchant) (Credentials, error) {
	m.Normalize()
	if err := m.Validate(); err != nil {
		return Credentials{}, err
	}
	password := NewPassword()
	if err := r.CreateMerchant(ctx, m, password); err != nil {
		return Credentials{}, err
	}
	key, _, err := r.CreateKey(ctx, m.ID)
	if err != nil {
		return Credentials{}, err
	}
	return Credentials{MerchantID: m.ID.String(), APIKey: key, DashboardEmail: m.DashboardEmail, DashboardPassword: password}, nil
}

// ReadCredentials reads credentials kept by WriteFile.
func ReadCredentials(path string) (Credentials, error) {
	var c Credentials
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(b, &c)
}

// WriteFile keeps c in path as indented JSON, readable by its owner only
// (mode 0600): it holds a key and a password.
func (c Credentials) WriteFile(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}
