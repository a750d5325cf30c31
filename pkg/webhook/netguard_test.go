package webhook_test

import (
	"encoding/pem"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/webhook"
)

func TestIsPublicAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		want bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"2606:4700:4700::1111", true},
		{"172.32.0.1", true},  // just outside 172.16/12
		{"100.128.0.1", true}, // just outside 100.64/10
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"::1", false},
		{"10.0.0.1", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		{"224.0.0.1", false},
		{"ff02::1", false},
		{"ff0e::1", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"::", false},
		{"255.255.255.255", false},
		{"240.0.0.1", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::a00:1", false},  // NAT64 of 10.0.0.1
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"::127.0.0.1", false},
	}
	for _, tt := range tests {
		if got := webhook.IsPublicAddr(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("IsPublicAddr(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

func TestLoadCAFile(t *testing.T) {
	t.Parallel()
	r := mustReceiver(t, func(w http.ResponseWriter, _ *http.Request) {})
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	pool, err := webhook.LoadCAFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	res := mustClient(t, webhook.ClientConfig{AllowPrivateNetworks: true, RootCAs: pool}).
		Send(t.Context(), delivery(r.URL, webhook.NewSecret()))
	if !res.Success {
		t.Errorf("with the CA file: Result = %+v, want success", res)
	}

	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := webhook.LoadCAFile(empty); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("LoadCAFile(no PEM) = %v, want an error", err)
	}
	if _, err := webhook.LoadCAFile(filepath.Join(dir, "absent.pem")); err == nil {
		t.Error("LoadCAFile(absent) = nil error")
	}
}
