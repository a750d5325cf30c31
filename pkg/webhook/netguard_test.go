package webhook_test

import (
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/webhook"
)

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
