package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// A new merchant's dashboard login is its owner; an e-mail already taken
// by another merchant (any case) keeps signing in to the first one.
func TestCreateMerchantCreatesItsOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	merchants, users := postgres.NewMerchantStore(pool, nil), postgres.NewDashboardUserStore(pool)
	first := &merchant.Merchant{Name: "Loja", StoreURL: "https://loja.example.com", DashboardEmail: "Dona@Loja.example.com"}
	if err := merchants.CreateMerchant(ctx, first, "first-password"); err != nil {
		t.Fatal(err)
	}
	u, err := users.FindUserByEmail(ctx, "dona@loja.example.com")
	if err != nil {
		t.Fatalf("the owner by e-mail in another case: %v", err)
	}
	if u.MerchantID != first.ID || u.Role != merchant.RoleOwner || bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte("first-password")) != nil {
		t.Errorf("owner %+v: want merchant %s, role owner, the merchant's password", u, first.ID)
	}
	second := &merchant.Merchant{Name: "Outra", StoreURL: "https://outra.example.com", DashboardEmail: "dona@loja.example.com"}
	if err := merchants.CreateMerchant(ctx, second, "second-password"); err != nil {
		t.Fatalf("a merchant whose e-mail is taken: %v", err)
	}
	if u, _ := users.FindUserByEmail(ctx, "dona@loja.example.com"); u.MerchantID != first.ID {
		t.Errorf("the e-mail now signs in to %s, want still the first merchant", u.MerchantID)
	}
	if list, _ := users.ListUsers(ctx, second.ID); len(list) != 0 {
		t.Errorf("the second merchant has users %v, want none until one is invited", list)
	}
}

func TestInviteAcceptedOnceBeforeExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, users := usersOfAMerchant(t)
	now := time.Now()
	in, hash := mustInvite(t, users, m.ID, "ana@loja.example.com", merchant.RoleViewer, now.Add(time.Hour))
	if _, err := users.AcceptInvite(ctx, hash, "h", now.Add(2*time.Hour)); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("an expired invitation: %v, want not found", err)
	}
	u, err := users.AcceptInvite(ctx, hash, "h", now)
	if err != nil || u.MerchantID != m.ID || u.Role != merchant.RoleViewer || u.Email != in.Email {
		t.Fatalf("accept: %+v %v", u, err)
	}
	if _, err := users.AcceptInvite(ctx, hash, "h", now); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("accepted twice: %v, want not found", err)
	}
	if _, err := users.FindUser(ctx, uuid.New(), u.ID); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("the user under another merchant: %v, want not found", err)
	}
}
