package postgres

import (
	"errors"
	"sync"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ledger"
)

// maxKnownWallets bounds the members a LedgerStore remembers as having a
// wallet (about 80 bytes each); past it the memory starts again empty.
const maxKnownWallets = 1 << 18

// knownWallets remembers the members whose wallet row the store has seen.
// Wallets are never deleted, so a batch whose members are all known skips
// creating them: that insert, planned and run for every batch, was about
// 4 % of the statements' time in a sales run, for rows that exist after a
// member's first command.
type knownWallets struct {
	mu  sync.Mutex
	set map[ledger.ScopedID]struct{}
}

func newKnownWallets() *knownWallets {
	return &knownWallets{set: map[ledger.ScopedID]struct{}{}}
}

// unknown returns the keys among merchants[i], members[i] not known to
// have a wallet, in their order.
func (k *knownWallets) unknown(merchants, members []uuid.UUID) (um, uid []uuid.UUID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := range members {
		if _, ok := k.set[ledger.ScopedID{MerchantID: merchants[i], ID: members[i]}]; !ok {
			um, uid = append(um, merchants[i]), append(uid, members[i])
		}
	}
	return um, uid
}

// remember adds the wallets of book, which its transaction holds locked.
func (k *knownWallets) remember(book *ledger.Book) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.set)+len(book.Wallets) > maxKnownWallets {
		clear(k.set)
	}
	for key := range book.Wallets {
		k.set[key] = struct{}{}
	}
}

// forget drops keys, so that their wallet is created again.
func (k *knownWallets) forget(keys []ledger.ScopedID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, key := range keys {
		delete(k.set, key)
	}
}

// errWalletNotFound is returned, retryable, when a member known to have a
// wallet has none in the transaction: the one seen was created by a
// transaction that then rolled back, or is not committed yet. The retry
// creates it (or waits for its creator) before reading anything.
var errWalletNotFound = errors.New("a member's wallet was not found where one was seen; retrying with the wallet created")

// checkKnown returns errWalletNotFound, and forgets them, when members of
// book that exist have no wallet although none was to be created.
func (k *knownWallets) checkKnown(book *ledger.Book) error {
	var missing []ledger.ScopedID
	for key := range book.Members {
		if _, ok := book.Wallets[key]; !ok {
			missing = append(missing, key)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	k.forget(missing)
	return errWalletNotFound
}
