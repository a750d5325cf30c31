package ledger

import (
	"context"

	"github.com/google/uuid"
)

// WalletReader reads a member's wallet, public transactions and ledger
// entries (postgres.WalletReads). A wallet the ledger never wrote reads
// as zero.
type WalletReader interface {
	FindWallet(ctx context.Context, merchantID, memberID uuid.UUID) (Wallet, error)
	// ListTransactions returns the member's public transactions, newest
	// first.
	ListTransactions(ctx context.Context, merchantID, memberID uuid.UUID) ([]Transaction, error)
	// ListEntries returns a page of the member's ledger entries selected
	// by f, newest first, and how many f selects.
	ListEntries(ctx context.Context, merchantID, memberID uuid.UUID, f EntryFilter) ([]Entry, int, error)
}
