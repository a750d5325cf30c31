package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// Attempts count per e-mail (any case) and per client key within the
// window; a forgotten one does not count.
func TestSignInAttemptsCountedPerEmailAndClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	users := postgres.NewDashboardUserStore(testenv.MustPool(t))
	now := time.Now()
	since := now.Add(-15 * time.Minute)
	claim := func(email, client string, at time.Time) (int64, error) {
		return users.ClaimSignInAttempt(ctx, email, client, at, since, 3)
	}
	// Outside the window: not counted.
	if _, err := claim("a@x.com", "10.0.0.1", now.Add(-20*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ email, client string }{{"A@x.com", "10.0.0.1"}, {"a@x.com", "10.0.0.2"}, {"b@x.com", "10.0.0.1"}} {
		if _, err := claim(c.email, c.client, now); err != nil {
			t.Fatalf("claim %v: %v", c, err)
		}
	}
	right, err := claim("c@x.com", "10.0.0.3", now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := claim("a@X.com", "10.0.0.9", now); err != nil {
		t.Errorf("the 3rd attempt of the e-mail in the window: %v", err)
	}
	if _, err := claim("a@x.com", "10.0.0.8", now); !apperr.Is(err, apperr.RateLimited) {
		t.Errorf("a 4th attempt of the e-mail past a limit of 3: %v, want rate limited", err)
	}
	if _, err := claim("z@x.com", "10.0.0.1", now); err != nil {
		t.Errorf("the 3rd attempt of 10.0.0.1 (the 4th of them is out of the window): %v", err)
	}
	if _, err := claim("y@x.com", "10.0.0.1", now); !apperr.Is(err, apperr.RateLimited) {
		t.Errorf("a 4th attempt of the client: %v, want rate limited", err)
	}
	if err := users.ForgetSignInAttempt(ctx, right); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := claim("c@x.com", "10.0.0.3", now); err != nil {
			t.Fatalf("after the right password was forgotten, 3 attempts of c@x.com: %v", err)
		}
	}
}

// However many claims arrive at once, at most limit pass.
func TestSignInAttemptsClaimedAtomically(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	users := postgres.NewDashboardUserStore(testenv.MustPool(t))
	now := time.Now()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		passed int
		start  = make(chan struct{})
	)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			email := "same@x.com"
			if i%2 == 1 {
				email = uuid.NewString() + "@x.com" // the other half share only the client
			}
			_, err := users.ClaimSignInAttempt(ctx, email, "10.0.0.1", now, now.Add(-time.Minute), 10)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				passed++
			} else if !apperr.Is(err, apperr.RateLimited) {
				t.Errorf("claim: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if passed != 10 {
		t.Errorf("%d of 40 concurrent claims passed, want 10", passed)
	}
}

// usersOfAMerchant is a new merchant (with its owner) and the store.
func usersOfAMerchant(t *testing.T) (*merchant.Merchant, *postgres.DashboardUserStore) {
	t.Helper()
	pool := testenv.MustPool(t)
	return testenv.MustMerchant(t, pool, nil, merchant.Merchant{}), postgres.NewDashboardUserStore(pool)
}

// mustInvite invites email as role to the merchant until expires and
// returns the invitation and its token's hash.
func mustInvite(t *testing.T, users *postgres.DashboardUserStore, merchantID uuid.UUID, email, role string, expires time.Time) (*merchant.Invite, []byte) {
	t.Helper()
	_, hash := merchant.NewInviteToken()
	in := &merchant.Invite{MerchantID: merchantID, Email: email, Role: role, ExpiresAt: expires}
	if err := users.CreateInvite(context.Background(), in, hash); err != nil {
		t.Fatal(err)
	}
	return in, hash
}

func TestLastOwnerCannotBeRemovedOrDemoted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, users := usersOfAMerchant(t)
	add := func(email, role string) *merchant.DashboardUser {
		_, hash := mustInvite(t, users, m.ID, email, role, time.Now().Add(time.Hour))
		u, err := users.AcceptInvite(ctx, hash, "h", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	first, err := users.ListUsers(ctx, m.ID)
	if err != nil || len(first) != 1 || first[0].Role != merchant.RoleOwner {
		t.Fatalf("the new merchant's users: %+v %v, want its owner", first, err)
	}
	a, b, v := &first[0], add("b@x.com", merchant.RoleOwner), add("v@x.com", merchant.RoleViewer)
	// Two owners removing each other at once: one wins, one owner stays.
	errs := make(chan error, 2)
	for _, u := range []*merchant.DashboardUser{a, b} {
		go func() { errs <- users.RemoveUser(ctx, m.ID, u.ID) }()
	}
	e1, e2 := <-errs, <-errs
	if (e1 == nil) == (e2 == nil) || !(errors.Is(e1, merchant.ErrLastOwner) || errors.Is(e2, merchant.ErrLastOwner)) {
		t.Fatalf("two owners removed at once: %v and %v, want one removal and one ErrLastOwner", e1, e2)
	}
	list, _ := users.ListUsers(ctx, m.ID)
	var last *merchant.DashboardUser
	for i := range list {
		if list[i].Role == merchant.RoleOwner {
			last = &list[i]
		}
	}
	if len(list) != 2 || last == nil {
		t.Fatalf("users after the race: %+v, want the viewer and one owner", list)
	}
	if err := users.SetRole(ctx, m.ID, last.ID, merchant.RoleViewer); !errors.Is(err, merchant.ErrLastOwner) {
		t.Errorf("demote the last owner: %v, want ErrLastOwner", err)
	}
	if err := users.RemoveUser(ctx, m.ID, v.ID); err != nil {
		t.Errorf("remove the viewer: %v", err)
	}
	if err := users.RemoveUser(ctx, uuid.New(), last.ID); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("remove under another merchant: %v, want not found", err)
	}
	if err := users.SetRole(ctx, m.ID, uuid.New(), merchant.RoleOwner); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("the role of no user: %v, want not found", err)
	}
}

func TestPasswordChangeBumpsTheSessionVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	merchants, users := postgres.NewMerchantStore(pool, nil), postgres.NewDashboardUserStore(pool)
	m := &merchant.Merchant{Name: "Loja", StoreURL: "https://loja.example.com", DashboardEmail: "dona@loja.example.com"}
	if err := merchants.CreateMerchant(ctx, m, "first-password-1"); err != nil {
		t.Fatal(err)
	}
	u, _ := users.FindUserByEmail(ctx, m.DashboardEmail)
	v, err := users.SetPassword(ctx, m.ID, u.ID, "new-hash")
	if err != nil || v != u.SessionVersion+1 {
		t.Errorf("SetPassword: version %d (%v), want %d", v, err, u.SessionVersion+1)
	}
	if again, _ := users.FindUser(ctx, m.ID, u.ID); again.SessionVersion != v || again.PasswordHash != "new-hash" {
		t.Errorf("after SetPassword: %+v", again)
	}
	if _, err := users.SetPassword(ctx, uuid.New(), u.ID, "x"); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("another merchant's user: %v, want not found", err)
	}
}

func TestPendingInvitesListedAndCancelled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, users := usersOfAMerchant(t)
	now := time.Now()
	mk := func(email string, expires time.Time) (*merchant.Invite, []byte) {
		return mustInvite(t, users, m.ID, email, merchant.RoleViewer, expires)
	}
	pending, hash := mk("a@x.com", now.Add(time.Hour))
	mk("expired@x.com", now.Add(-time.Minute))
	_, usedHash := mk("used@x.com", now.Add(time.Hour))
	if _, err := users.AcceptInvite(ctx, usedHash, "h", now); err != nil {
		t.Fatal(err)
	}
	list, err := users.ListInvites(ctx, m.ID, now)
	if err != nil || len(list) != 1 || list[0].ID != pending.ID {
		t.Fatalf("pending invitations: %+v %v, want only a@x.com", list, err)
	}
	if err := users.CancelInvite(ctx, uuid.New(), pending.ID); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("cancel under another merchant: %v, want not found", err)
	}
	if err := users.CancelInvite(ctx, m.ID, pending.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := users.FindInvite(ctx, hash, now); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("the cancelled invitation's token: %v, want not found", err)
	}
	if _, err := users.AcceptInvite(ctx, hash, "h", now); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("accept the cancelled invitation: %v, want not found", err)
	}
}
