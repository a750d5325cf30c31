package secretbox

import (
	"bytes"
	"testing"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	box, err := FromBase64(NewKey())
	if err != nil {
		t.Fatal(err)
	}
	sealed := box.Seal("guru-account-token-0123456789")
	if bytes.Contains(sealed, []byte("guru-account-token")) {
		t.Fatal("sealed bytes contain the plaintext")
	}
	got, err := box.Open(sealed)
	if err != nil || got != "guru-account-token-0123456789" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	other, _ := FromBase64(NewKey())
	if _, err := other.Open(sealed); err == nil {
		t.Fatal("Open with another key succeeded")
	}
	if box.Seal("") != nil {
		t.Fatal("Seal(\"\") should be nil")
	}
	if got := Mask("whsec_abcdefgh"); got != "****efgh" {
		t.Fatalf("Mask = %q", got)
	}
}
