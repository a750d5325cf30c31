package dashboard

import (
	"bufio"
	"bytes"
	_ "embed"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// The password policy of dashboard users: at least minPassword
// characters, at most maxPassword bytes (bcrypt reads no further), and not
// one of the common passwords of passwords/common.txt, compared without
// regard to case.
const (
	minPassword = 12
	maxPassword = 72
)

// commonPasswordsTxt is SecLists' most used million passwords, those of 12
// characters or more (passwords/SOURCE.md).
//
//go:embed passwords/common.txt
var commonPasswordsTxt []byte

var commonPasswords = sync.OnceValue(func() map[string]struct{} {
	set := make(map[string]struct{}, 45000)
	sc := bufio.NewScanner(bytes.NewReader(commonPasswordsTxt))
	for sc.Scan() {
		set[strings.ToLower(sc.Text())] = struct{}{}
	}
	return set
})

// passwordProblem returns the catalogue key of what is wrong with a new
// password, or "" when the policy accepts it.
func passwordProblem(p string) string {
	switch {
	case utf8.RuneCountInString(p) < minPassword:
		return "password.too_short"
	case len(p) > maxPassword:
		return "password.too_long"
	}
	if _, common := commonPasswords()[strings.ToLower(p)]; common {
		return "password.common"
	}
	return ""
}

// hashPassword returns the bcrypt hash of a new password the policy
// accepted (passwordProblem).
func hashPassword(p string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(p), bcrypt.DefaultCost)
	return string(h), err
}
