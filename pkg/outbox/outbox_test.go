package outbox

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestEnvelopeEncodesAsMarshal checks the envelope written by hand is
// byte for byte what json.Marshal writes, for data that needs escaping
// and for a type that does.
func TestEnvelopeEncodesAsMarshal(t *testing.T) {
	t.Parallel()
	data := map[string]any{"name": "Zoë <b>&\"x\"</b>\n", "amount": 1234, "nested": []string{"a\u2028b"}}
	for _, typ := range []string{"referral.created", "odd\"type<"} {
		rec, err := NewRecord(uuid.New(), uuid.New(), typ, data, time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		var env Envelope
		if err := json.Unmarshal(rec.Payload, &env); err != nil {
			t.Fatalf("%s: payload does not decode: %v", typ, err)
		}
		want, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		if string(rec.Payload) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", typ, rec.Payload, want)
		}
		if env.Type != typ || env.CreatedAt != "2026-11-27T10:00:00.000Z" {
			t.Errorf("envelope %+v", env)
		}
	}
}
