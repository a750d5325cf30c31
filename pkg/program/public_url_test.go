package program_test

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/program"
)

// TestAPIWarnsOfAPlainPublicURL (issue 29): the API warns once as it
// starts when PUBLIC_URL is not https, naming the setting; an https one
// draws no warning.
func TestAPIWarnsOfAPlainPublicURL(t *testing.T) {
	t.Parallel()
	for publicURL, warns := range map[string]bool{
		"http://localhost:8080":     true,
		"http://convida.loja.test":  true,
		"https://convida.loja.test": false,
	} {
		cfg := config(t)
		cfg.DatabaseURL, cfg.KafkaBrokers = "postgres://postgres@127.0.0.1:1/x", []string{"127.0.0.1:1"}
		cfg.PublicURL = publicURL
		core, logs := observer.New(zap.WarnLevel)
		d, err := program.New(cfg, zap.New(core), "test")
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		api := program.NewAPI(d)
		api.Listener = l
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		if err := api.Run(ctx); err != nil {
			t.Errorf("PUBLIC_URL %s: Run = %v", publicURL, err)
		}
		cancel()
		d.Close()
		got := logs.FilterMessageSnippet("PUBLIC_URL is not https").Len()
		if warns && got != 1 || !warns && got != 0 {
			t.Errorf("PUBLIC_URL %s: %d warnings, want warned=%v (log: %v)", publicURL, got, warns, logs.All())
		}
	}
}
