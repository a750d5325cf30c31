package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// PutIntegration merges under the row's lock: saves of different fields
// at once all land, even on a merchant with no settings yet; a new API URL
// drops the stored API credentials (merchant.Integration.Merge), and an
// API URL never given stays empty in the row (the public API, whatever its
// address becomes).
func TestPutIntegrationMerges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, box := testenv.MustPool(t), testenv.MustBox(t)
	store := postgres.NewMerchantStore(pool, box)
	m := testenv.MustMerchant(t, pool, box, merchant.Merchant{Name: "Loja", StoreURL: "https://loja.example.com"})

	updates := []merchant.Integration{
		{Provider: "yampi", WebhookSecret: "whs"}, {Provider: "yampi", UserToken: "yt"}, {Provider: "yampi", UserSecretKey: "ysk"},
	}
	var wg sync.WaitGroup
	for _, u := range updates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := store.PutIntegration(ctx, m.ID, u); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := store.PutIntegration(ctx, m.ID, merchant.Integration{Provider: "yampi", StoreAlias: "loja", UserToken: "yt", UserSecretKey: "ysk"})
	if err != nil {
		t.Fatal(err)
	}
	if got.WebhookSecret != "whs" || got.UserToken != "yt" || got.UserSecretKey != "ysk" || got.StoreAlias != "loja" ||
		got.APIURL != (merchant.Integration{Provider: "yampi"}).ValueOf("api_url") {
		t.Fatalf("after 3 concurrent saves and the store alias with the credentials: %+v, want every field", got)
	}
	var rawURL string
	if err := pool.QueryRow(ctx, `SELECT api_url FROM integration_settings WHERE merchant_id = $1 AND provider = 'yampi'`,
		m.ID).Scan(&rawURL); err != nil || rawURL != "" {
		t.Errorf("stored api_url = %q, %v; want it left empty", rawURL, err)
	}

	got, err = store.PutIntegration(ctx, m.ID, merchant.Integration{Provider: "yampi", APIURL: "https://outra.example.com/v2"})
	if err != nil {
		t.Fatal(err)
	}
	if got.UserToken != "" || got.UserSecretKey != "" || got.WebhookSecret != "whs" || got.StoreAlias != "loja" ||
		got.APIURL != "https://outra.example.com/v2" {
		t.Errorf("after a new API URL alone: %+v, want the API credentials dropped and the rest kept", got)
	}
}
