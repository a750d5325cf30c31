package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// A new merchant's dashboard login is its owner, also when the e-mail
// (in any case) is a user of another merchant: each merchant has its own
// user, password and role, and the sign-in finds both.
func TestCreateMerchantCreatesItsOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	merchants, users := postgres.NewMerchantStore(pool, nil), postgres.NewDashboardUserStore(pool)
	email := uuid.NewString() + "@Loja.example.com"
	first := &merchant.Merchant{Name: "Loja", StoreURL: "https://loja.example.com", DashboardEmail: email}
	if err := merchants.CreateMerchant(ctx, first, "first-password"); err != nil {
		t.Fatal(err)
	}
	u, err := users.FindUserByEmail(ctx, first.ID, strings.ToLower(email))
	if err != nil {
		t.Fatalf("the owner by e-mail in another case: %v", err)
	}
	if u.MerchantID != first.ID || u.Role != merchant.RoleOwner || bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte("first-password")) != nil {
		t.Errorf("owner %+v: want merchant %s, role owner, the merchant's password", u, first.ID)
	}
	second := &merchant.Merchant{Name: "Outra", StoreURL: "https://outra.example.com", DashboardEmail: strings.ToUpper(email)}
	if err := merchants.CreateMerchant(ctx, second, "second-password"); err != nil {
		t.Fatalf("a merchant whose e-mail is a user elsewhere: %v", err)
	}
	other, err := users.FindUserByEmail(ctx, second.ID, email)
	if err != nil || other.Role != merchant.RoleOwner || bcrypt.CompareHashAndPassword([]byte(other.PasswordHash), []byte("second-password")) != nil {
		t.Errorf("the second merchant's owner: %+v %v, want its own owner with its own password", other, err)
	}
	all, err := users.FindUsersByEmail(ctx, " "+email+" ")
	if err != nil || len(all) != 2 || all[0].MerchantID != first.ID || all[1].MerchantID != second.ID {
		t.Errorf("the e-mail's users: %+v %v, want the first merchant's and the second's, oldest first", all, err)
	}
	if _, err := users.FindUserByEmail(ctx, uuid.New(), email); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("the e-mail at a merchant it is no user of: %v, want not found", err)
	}
}

// Two merchants invite the same e-mail and both invitations are accepted,
// each with its own password; a merchant cannot have the e-mail twice.
func TestSameEmailInvitedByTwoMerchants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	users := postgres.NewDashboardUserStore(pool)
	a := testenv.MustMerchant(t, pool, nil, merchant.Merchant{})
	b := testenv.MustMerchant(t, pool, nil, merchant.Merchant{})
	now := time.Now()
	email := uuid.NewString() + "@example.com"
	_, hashA := mustInvite(t, users, a.ID, email, merchant.RoleViewer, now.Add(time.Hour))
	_, hashB := mustInvite(t, users, b.ID, strings.ToUpper(email), merchant.RoleOwner, now.Add(time.Hour))
	_, again := mustInvite(t, users, b.ID, email, merchant.RoleViewer, now.Add(time.Hour))
	ua, err := users.AcceptInvite(ctx, hashA, "hash-a", now)
	if err != nil || ua.MerchantID != a.ID {
		t.Fatalf("merchant A's invitation: %+v %v", ua, err)
	}
	ub, err := users.AcceptInvite(ctx, hashB, "hash-b", now)
	if err != nil || ub.MerchantID != b.ID || ub.Role != merchant.RoleOwner || ub.PasswordHash != "hash-b" {
		t.Fatalf("merchant B's invitation of the same e-mail: %+v %v", ub, err)
	}
	if _, err := users.AcceptInvite(ctx, again, "hash-c", now); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("a second invitation of the e-mail at the same merchant: %v, want conflict", err)
	}
	if all, _ := users.FindUsersByEmail(ctx, email); len(all) != 2 {
		t.Errorf("the e-mail's users: %+v, want two", all)
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
