package postgres

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/redemption"
)

// OutcomeStore reads what the ledger recorded: command outcomes and
// redemptions. It writes nothing.
type OutcomeStore struct{ pool *pgxpool.Pool }

var _ ledger.OutcomeStore = (*OutcomeStore)(nil)

// NewOutcomeStore returns an OutcomeStore.
func NewOutcomeStore(pool *pgxpool.Pool) *OutcomeStore { return &OutcomeStore{pool: pool} }

// FindOutcome returns the recorded outcome of the command, nil when none.
func (s *OutcomeStore) FindOutcome(ctx context.Context, merchantID uuid.UUID, commandID string) (*ledger.Outcome, error) {
	o := &ledger.Outcome{MerchantID: merchantID, CommandID: commandID}
	var result []byte
	err := s.pool.QueryRow(ctx, `SELECT member_id, kind, outcome, error_code, result FROM processed_commands
WHERE merchant_id = $1 AND command_id = $2`, merchantID, commandID).Scan(&o.MemberID, &o.Kind, &o.Status, &o.ErrorCode, &result)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var body struct {
		Reason string          `json:"reason"`
		Data   json.RawMessage `json:"data"`
	}
	_ = json.Unmarshal(result, &body)
	o.Reason, o.Result = body.Reason, body.Data
	return o, nil
}

// FindRedemption returns the merchant's redemption, or apperr.NotFound.
func (s *OutcomeStore) FindRedemption(ctx context.Context, merchantID, id uuid.UUID) (*redemption.Redemption, error) {
	r := &redemption.Redemption{}
	var result []byte
	err := s.pool.QueryRow(ctx, `SELECT merchant_id, id, member_id, amount, type, status, transaction_id, debit_txn_id,
  subscription_id, result, failure_reason, created_at, updated_at FROM redemptions WHERE merchant_id = $1 AND id = $2`,
		merchantID, id).Scan(&r.MerchantID, &r.ID, &r.MemberID, &r.Amount, &r.Type, &r.Status, &r.TransactionID,
		&r.DebitTxnID, &r.SubscriptionID, &result, &r.FailureReason, &r.CreatedAt, &r.UpdatedAt)
	if err != nil {
		return nil, notFound(err, "redemption not found")
	}
	_ = json.Unmarshal(result, &r.Result)
	return r, nil
}
