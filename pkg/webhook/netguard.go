package webhook

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"
)

// ClientConfig configures a Client. The zero value is production-safe:
// public addresses only, the system's roots, the timeouts of webhooks.md.
type ClientConfig struct {
	// AllowPrivateNetworks lifts netguard's dial-time address check and
	// allows plain http URLs (WEBHOOK_ALLOW_PRIVATE_NETWORKS, for
	// development and tests only).
	AllowPrivateNetworks bool
	// RootCAs are the roots trusted for receivers' certificates; nil means
	// the system's (LoadCAFile adds WEBHOOK_CA_FILE to them).
	RootCAs *x509.CertPool
	// Timeout bounds one attempt, from dial to the end of the body;
	// default 10 s.
	Timeout time.Duration
	// ConnectTimeout bounds the TCP connect and the TLS handshake, each;
	// default 5 s.
	ConnectTimeout time.Duration
	// MaxConnsPerHost caps the connections to one host:port, 0 for no cap.
	// It is also the number of idle connections kept per host (256 when
	// 0), so that a steady rate reuses connections instead of dialling.
	MaxConnsPerHost int
}

// The defaults of ClientConfig (webhooks.md: a 2xx within 10 s, 5 s to
// connect).
const (
	DefaultTimeout        = 10 * time.Second
	DefaultConnectTimeout = 5 * time.Second
)

// withDefaults fills in zero fields.
func (c ClientConfig) withDefaults() ClientConfig {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	return c
}

// LoadCAFile returns the system's root pool plus the PEM certificates of
// the file at path (WEBHOOK_CA_FILE), so that receivers behind a private
// CA can be trusted. It fails when the file cannot be read or holds no PEM
// certificate.
func LoadCAFile(path string) (*x509.CertPool, error) {
	pemBytes, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("webhook CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool() // no system roots here: trust the file alone
	}
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("webhook CA file %s: %w", path, errNoPEM)
	}
	return pool, nil
}

var errNoPEM = errors.New("no PEM certificate found")
