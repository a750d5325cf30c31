package program

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
)

// ErrUsage marks a command line that does not parse (exit status 2).
var ErrUsage = errors.New("usage")

// Bootstrap runs the administrative commands of decision 3 and prints one
// JSON object on out:
//
//	merchant create --name NAME --store-url URL [--email E] [--code-prefix P]
//	key create --merchant ID
//	key revoke --merchant ID --key-prefix P
//
// They read DATABASE_URL and apply the migrations first.
func Bootstrap(ctx context.Context, cfg Config, args []string, out io.Writer) error {
	if len(args) < 2 {
		return fmt.Errorf("%w: merchant create | key create | key revoke", ErrUsage)
	}
	if err := postgres.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.Migrate(ctx, pool); err != nil {
		return err
	}
	store := postgres.NewMerchantStore(pool, nil)
	fs := flag.NewFlagSet(args[0]+" "+args[1], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var result any
	switch args[0] + " " + args[1] {
	case "merchant create":
		name := fs.String("name", "", "merchant name")
		storeURL := fs.String("store-url", "", "the store's URL, base of referral links")
		email := fs.String("email", "", "dashboard login (default owner@<store host>)")
		prefix := fs.String("code-prefix", "", "referral code prefix, 2-8 letters (default from the name)")
		if err := fs.Parse(args[2:]); err != nil {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		result, err = createMerchant(ctx, store, *name, *storeURL, *email, *prefix)
	case "key create":
		id := fs.String("merchant", "", "merchant id")
		if err := fs.Parse(args[2:]); err != nil {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		result, err = createKey(ctx, store, *id)
	case "key revoke":
		id := fs.String("merchant", "", "merchant id")
		prefix := fs.String("key-prefix", "", "the first 8 characters of the key")
		if err := fs.Parse(args[2:]); err != nil {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		result, err = revokeKey(ctx, store, *id, *prefix)
	default:
		return fmt.Errorf("%w: unknown command %q (merchant create | key create | key revoke)", ErrUsage, strings.Join(args[:2], " "))
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(result)
}

// MerchantCreated is the output of merchant create.
type MerchantCreated struct {
	MerchantID        string `json:"merchant_id"`
	APIKey            string `json:"api_key"`
	DashboardEmail    string `json:"dashboard_email"`
	DashboardPassword string `json:"dashboard_password"`
}

// CreateMerchant creates a merchant with its first API key.
func CreateMerchant(ctx context.Context, store *postgres.MerchantStore, name, storeURL, email, prefix string) (MerchantCreated, error) {
	return createMerchant(ctx, store, name, storeURL, email, prefix)
}

func createMerchant(ctx context.Context, store *postgres.MerchantStore, name, storeURL, email, prefix string) (MerchantCreated, error) {
	name, storeURL = strings.TrimSpace(name), strings.TrimSpace(storeURL)
	if name == "" || storeURL == "" {
		return MerchantCreated{}, fmt.Errorf("%w: --name and --store-url are required", ErrUsage)
	}
	u, err := url.Parse(storeURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return MerchantCreated{}, fmt.Errorf("%w: --store-url must be an http(s) URL", ErrUsage)
	}
	if email == "" {
		email = "owner@" + u.Hostname()
	}
	prefix = strings.ToUpper(strings.TrimSpace(prefix))
	if prefix != "" && (len(prefix) < 2 || len(prefix) > 8 || merchant.FoldLetters(prefix, 8) != prefix) {
		return MerchantCreated{}, fmt.Errorf("%w: --code-prefix must be 2 to 8 letters A-Z", ErrUsage)
	}
	m := &merchant.Merchant{Name: name, StoreURL: storeURL, DashboardEmail: email, CodePrefix: prefix}
	password := merchant.NewPassword()
	if err := store.CreateMerchant(ctx, m, password); err != nil {
		return MerchantCreated{}, err
	}
	key, _, err := store.CreateKey(ctx, m.ID)
	if err != nil {
		return MerchantCreated{}, err
	}
	return MerchantCreated{MerchantID: m.ID.String(), APIKey: key, DashboardEmail: email, DashboardPassword: password}, nil
}

func createKey(ctx context.Context, store *postgres.MerchantStore, id string) (any, error) {
	mid, err := uuid.Parse(strings.TrimSpace(id))
	if err != nil {
		return nil, fmt.Errorf("%w: --merchant must be a merchant id", ErrUsage)
	}
	plain, k, err := store.CreateKey(ctx, mid)
	if err != nil {
		return nil, err
	}
	return map[string]string{"merchant_id": mid.String(), "api_key": plain, "key_prefix": k.Prefix}, nil
}

func revokeKey(ctx context.Context, store *postgres.MerchantStore, id, prefix string) (any, error) {
	mid, err := uuid.Parse(strings.TrimSpace(id))
	if err != nil || strings.TrimSpace(prefix) == "" {
		return nil, fmt.Errorf("%w: --merchant ID and --key-prefix P are required", ErrUsage)
	}
	n, err := store.RevokeKey(ctx, mid, strings.TrimSpace(prefix))
	if err != nil {
		return nil, err
	}
	return map[string]any{"merchant_id": mid.String(), "key_prefix": prefix, "revoked": n}, nil
}
