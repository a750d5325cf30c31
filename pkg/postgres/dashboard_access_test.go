package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// limits3 are small limits for the tests: 3 failures of an address in 15
// minutes, 3 of an e-mail in a day, refused from an address that failed
// on the e-mail within the hour.
var limits3 = merchant.SignInLimits{PerAddress: 3, AddressWindow: 15 * time.Minute, PerEmail: 3, EmailWindow: 24 * time.Hour, Tainted: time.Hour}

// An address's attempts count within its window, whatever the e-mails; a
// forgotten one does not count.
func TestSignInAttemptsCountedPerAddress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	users := postgres.NewDashboardUserStore(testenv.MustPool(t))
	now := testenv.Now(t)
	claim := func(email, client string, at time.Time) (int64, error) {
		return users.ClaimSignInAttempt(ctx, email, client, at, limits3)
	}
	// Outside the address's window: not counted for it.
	if _, err := claim("old@x.com", "10.0.0.1", now.Add(-20*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, email := range []string{"a@x.com", "b@x.com"} {
		if _, err := claim(email, "10.0.0.1", now); err != nil {
			t.Fatalf("claim %s: %v", email, err)
		}
	}
	right, err := claim("c@x.com", "10.0.0.1", now)
	if err != nil {
		t.Fatalf("the 3rd attempt of the address in the window: %v", err)
	}
	if _, err := claim("d@x.com", "10.0.0.1", now); !apperr.Is(err, apperr.RateLimited) {
		t.Errorf("a 4th attempt of the address past a limit of 3: %v, want rate limited", err)
	}
	if _, err := claim("d@x.com", "10.0.0.2", now); err != nil {
		t.Errorf("another address: %v", err)
	}
	if err := users.ForgetSignInAttempt(ctx, right); err != nil {
		t.Fatal(err)
	}
	if _, err := claim("d@x.com", "10.0.0.1", now); err != nil {
		t.Errorf("after the right password was forgotten: %v", err)
	}
}

// Past an e-mail's own limit (any case, from any address), its attempts
// are refused only from an address that failed on it within the hour: a
// clean address is still checked, once, and an address clean again after
// the hour too.
func TestSignInAttemptsOfAGuessedEmail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	users := postgres.NewDashboardUserStore(testenv.MustPool(t))
	now := testenv.Now(t)
	claim := func(email, client string, at time.Time) error {
		_, err := users.ClaimSignInAttempt(ctx, email, client, at, limits3)
		return err
	}
	// Three failures from three addresses, one of them two hours ago:
	// within the e-mail's day, out of that address's hour.
	for i, c := range []struct {
		client string
		at     time.Time
	}{{"10.0.0.1", now}, {"10.0.0.2", now}, {"10.0.0.3", now.Add(-2 * time.Hour)}} {
		if err := claim([]string{"a@x.com", "A@X.com", "a@x.com "}[i], c.client, c.at); err != nil {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	for _, tainted := range []string{"10.0.0.1", "10.0.0.2"} {
		if err := claim("a@x.com", tainted, now); !apperr.Is(err, apperr.RateLimited) {
			t.Errorf("the e-mail from %s, which failed on it: %v, want rate limited", tainted, err)
		}
	}
	if err := claim("a@x.com", "10.0.0.3", now); err != nil {
		t.Errorf("the e-mail from an address whose failure is over an hour old: %v, want checked", err)
	}
	if err := claim("a@x.com", "10.0.0.9", now); err != nil {
		t.Errorf("the e-mail from a clean address: %v, want checked", err)
	}
	if err := claim("a@x.com", "10.0.0.9", now); !apperr.Is(err, apperr.RateLimited) {
		t.Errorf("the same address once more, now that it failed: %v, want rate limited", err)
	}
	if err := claim("other@x.com", "10.0.0.1", now); err != nil {
		t.Errorf("another e-mail from a tainted address under its own limit: %v", err)
	}
	if err := claim("a@x.com", "10.0.0.1", now.Add(25*time.Hour)); err != nil {
		t.Errorf("a day later: %v", err)
	}
}

// However many claims arrive at once, no limit is passed: 10 of 40 from
// one address; and past an e-mail's limit, one of 40 from a clean
// address.
func TestSignInAttemptsClaimedAtomically(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	users := postgres.NewDashboardUserStore(testenv.MustPool(t))
	now := testenv.Now(t)
	limits := merchant.SignInLimits{PerAddress: 10, AddressWindow: time.Minute, PerEmail: 10, EmailWindow: time.Hour, Tainted: time.Hour}
	concurrently := func(claim func(i int) error) int {
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			passed int
			start  = make(chan struct{})
		)
		for i := range 40 {
			wg.Go(func() {
				<-start
				err := claim(i)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					passed++
				} else if !apperr.Is(err, apperr.RateLimited) {
					t.Errorf("claim: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		return passed
	}
	if passed := concurrently(func(i int) error {
		email := "same@x.com"
		if i%2 == 1 {
			email = uuid.NewString() + "@x.com" // the other half share only the client
		}
		_, err := users.ClaimSignInAttempt(ctx, email, "10.0.0.1", now, limits)
		return err
	}); passed != 10 {
		t.Errorf("%d of 40 concurrent claims of one address passed, want 10", passed)
	}
	for i := range 10 {
		if _, err := users.ClaimSignInAttempt(ctx, "guessed@x.com", fmt.Sprintf("10.1.0.%d", i), now, limits); err != nil {
			t.Fatal(err)
		}
	}
	if passed := concurrently(func(int) error {
		_, err := users.ClaimSignInAttempt(ctx, "guessed@x.com", "10.2.0.1", now, limits)
		return err
	}); passed != 1 {
		t.Errorf("%d of 40 concurrent claims of a guessed e-mail from a clean address passed, want 1", passed)
	}
}

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
	u, _ := users.FindUserByEmail(ctx, m.ID, m.DashboardEmail)
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
