package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/audit"
)

func TestNewTakesTheActorOfTheContext(t *testing.T) {
	t.Parallel()
	m := uuid.New()
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.FixedZone("BRT", -3*3600))
	e := audit.New(context.Background(), m, audit.APIKeyCreated, audit.Target{Type: "api_key", ID: "k"}, nil, now)
	if e.Actor != audit.System || e.IP != "" || e.Details == nil || !e.CreatedAt.Equal(now) || e.CreatedAt.Location() != time.UTC {
		t.Errorf("without an actor: %+v, want the system, no address, empty details, now in UTC", e)
	}
	user := audit.Actor{Type: audit.ActorDashboardUser, ID: "u", Label: "ana@example.com"}
	ctx := audit.WithActor(context.Background(), user, "203.0.113.7")
	e = audit.New(ctx, m, audit.SignInSucceeded, audit.Target{Type: "dashboard_user", ID: "u"}, map[string]any{"x": 1}, now)
	if e.Actor != user || e.IP != "203.0.113.7" || e.MerchantID != m || e.ID == uuid.Nil || e.Details["x"] != 1 {
		t.Errorf("with an actor: %+v", e)
	}
}

func TestKnown(t *testing.T) {
	t.Parallel()
	if !audit.Known(audit.MemberErased) || audit.Known("member.deleted") || len(audit.Actions) != 21 {
		t.Errorf("Known or Actions wrong: %d actions", len(audit.Actions))
	}
}
