package dashboard

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/merchant"
)

func TestPasswordProblem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ password, want string }{
		{"", "password.too_short"},
		{"elevenchars", "password.too_short"},
		{"ééééééééééé", "password.too_short"}, // 11 characters, 22 bytes
		{"twelve chars", ""},
		{strings.Repeat("ab", 36) + "c", "password.too_long"},
		{strings.Repeat("é", 36), ""},                  // 36 characters, 72 bytes
		{strings.Repeat("é", 37), "password.too_long"}, // 74 bytes
		{"password1234", "password.common"},
		{"PASSWORD1234", "password.common"},
		{"1qaz2wsx3edc", "password.common"},
		{"correct horse battery", ""},
	} {
		if got := passwordProblem(tc.password); got != tc.want {
			t.Errorf("passwordProblem(%q) = %q, want %q", tc.password, got, tc.want)
		}
	}
}

// The passwords Convida makes itself (merchant create, the demo merchant)
// pass the policy.
func TestGeneratedPasswordsPassThePolicy(t *testing.T) {
	t.Parallel()
	for range 1000 {
		if p := merchant.NewPassword(); passwordProblem(p) != "" {
			t.Fatalf("merchant.NewPassword() = %q: %s", p, passwordProblem(p))
		}
	}
}

// common.txt is the file SOURCE.md describes.
func TestCommonPasswordsVendored(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256(commonPasswordsTxt)
	source, err := os.ReadFile("passwords/SOURCE.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(source), hex.EncodeToString(sum[:])) {
		t.Errorf("passwords/common.txt has sha256 %x, not the one passwords/SOURCE.md names", sum)
	}
	if n := len(commonPasswords()); n < 40000 {
		t.Errorf("%d common passwords, want the 43,000 or so of the list", n)
	}
}
