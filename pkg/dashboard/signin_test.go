package dashboard

import (
	"slices"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/convida/convida/pkg/merchant"
)

// passwordMatches returns the users (one per merchant) whose own password
// was typed, in their order; none for a password of none, or no user.
func TestPasswordMatches(t *testing.T) {
	t.Parallel()
	user := func(password string) merchant.DashboardUser {
		h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		return merchant.DashboardUser{MerchantID: uuid.New(), ID: uuid.New(), PasswordHash: string(h)}
	}
	a, b, c := user("shared-password-1"), user("another-password-2"), user("shared-password-1")
	ids := func(list []merchant.DashboardUser) []uuid.UUID {
		out := []uuid.UUID{}
		for _, u := range list {
			out = append(out, u.MerchantID)
		}
		return out
	}
	for _, tc := range []struct {
		what     string
		users    []merchant.DashboardUser
		password string
		want     []uuid.UUID
	}{
		{"the shared password", []merchant.DashboardUser{a, b, c}, "shared-password-1", []uuid.UUID{a.MerchantID, c.MerchantID}},
		{"one merchant's own", []merchant.DashboardUser{a, b, c}, "another-password-2", []uuid.UUID{b.MerchantID}},
		{"a wrong password", []merchant.DashboardUser{a, b, c}, "shared-password-2", []uuid.UUID{}},
		{"no user", nil, "convida-dashboard-dummy", []uuid.UUID{}},
	} {
		if got := ids(passwordMatches(tc.users, tc.password)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, got, tc.want)
		}
	}
}
