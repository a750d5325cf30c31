package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/segmentio/kafka-go"

	"github.com/convida/convida/pkg/embeddedbroker"
	"github.com/convida/convida/pkg/ingest"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/topic"
)

// A real broker outage (pkg/ingest/pending.go): the broker stops and starts
// again on its port and data directory. Meanwhile an accepted sale answers
// 503 within PublishTimeout, a refused delivery its 4xx at once, and an
// unattributed sale, whose 200 needs its record acknowledged, 503; none
// hangs. Once the broker is back the records of all of them reach
// inbound_deliveries with the answer each got, and the platform's retry of
// the 503'd sale is credited once.
func TestBrokerOutageRecordsArriveAndTheRetryIsCreditedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broker, err := embeddedbroker.Start(embeddedbroker.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// Registered before the stack's cleanup, so run after it: what the
	// stack's writers still retry reaches the broker that came back. The
	// closure closes whichever broker runs then.
	t.Cleanup(func() { broker.Close() })
	addr := broker.Addrs()[0]
	port, err := strconv.Atoi(addr[strings.LastIndex(addr, ":")+1:])
	if err != nil {
		t.Fatal(err)
	}
	s, tn, m := startWithAna(t, stackOptions{brokers: broker.Addrs()}, 1500)

	// 1. Warm: the merchant's Guru settings and Ana's coupon are cached,
	// the writer has its connections.
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "outage-warm", m.CouponCode, 97.9, "approved")), 200)
	s.waitBalance(tn, m.Email, wallet{totalEarned: 1500, pending: 1500})
	s.waitRecords(tn, 1)

	// 2. The broker is gone.
	broker.Close()
	sale := guruSale(t, tn, "outage-sale", m.CouponCode, 97.9, "approved")
	saleAt := time.Now()
	start := saleAt
	res := s.postGuru(tn, sale)
	took := time.Since(start)
	wantStatus(t, res, http.StatusServiceUnavailable)
	// Yampi gives up after 5 s; the 503 must reach it before.
	if took > ingest.PublishTimeout+1500*time.Millisecond {
		t.Errorf("503 after %v, want it within PublishTimeout (%v)", took, ingest.PublishTimeout)
	}
	// A refused delivery's answer does not depend on its record: at once.
	wrong := bytes.Replace(guruSale(t, tn, "outage-wrong", m.CouponCode, 97.9, "approved"), []byte(tn.guruToken), []byte(strings.Repeat("x", 40)), 1)
	start = time.Now()
	wantStatus(t, s.postGuru(tn, wrong), http.StatusUnauthorized)
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("401 after %v with the broker down, want it at once", took)
	}
	// An unattributed sale is answered 200 only once its record is
	// acknowledged: 503, at once, behind the records waiting.
	start = time.Now()
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "outage-nobody", "NOBODY-XXXX", 10, "approved")), http.StatusServiceUnavailable)
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("unattributed sale answered after %v with the broker down, want at once", took)
	}
	// The writer keeps retrying the 503'd sale's command and record after
	// the publish gave up (kafka-go: 10 attempts, backoff up to 1 s, about
	// 9 s): a broker back sooner takes them late. The store keeps the 503
	// record then (TestRecordDeliveriesKeepsTheAnswerGiven); this outage
	// outlasts those retries so that the deliveries topic holds exactly
	// the queue's records, whose order is checked below.
	time.Sleep(time.Until(saleAt.Add(outageLength)))

	// 3. The broker comes back on its address with its data.
	if broker, err = embeddedbroker.Start(embeddedbroker.Config{DataDir: dir, Port: port}); err != nil {
		t.Fatal(err)
	}
	const query = `SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1`
	testenv.Eventually(t, 90*time.Second, "the outage's records", func() bool { return s.count(query, tn.merchant.ID) >= 4 })
	// Each with the answer it got, in order of arrival.
	want := []string{"accepted 200", "unavailable 503", "unauthorized 401", "unavailable 503"}
	if got := s.records(tn); strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("records = %v, want %v", got, want)
	}
	// The queue published them in the order they were queued; the warm
	// sale's record travelled inside its command, and the ledger wrote it.
	if got := published(t, broker.Addrs()[0], tn.merchant.ID); strings.Join(got, ", ") != strings.Join(want[1:], ", ") {
		t.Errorf("records on %s = %v, want %v", topic.Deliveries, got, want[1:])
	}

	// 4. The platform retries the 503'd sale: credited once.
	// The queue drained through the writer the ingest publishes with, so
	// the retry finds it connected.
	res = s.postGuru(tn, sale)
	wantStatus(t, res, http.StatusOK)
	if res.Status == http.StatusOK && res.json(t)["status"] != "accepted" {
		t.Errorf("retry answered %s, want accepted", res.Body)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 3000, pending: 3000})
	time.Sleep(500 * time.Millisecond) // let any straggling command reach the ledger
	if got := s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1`, tn.merchant.ID); got != 2 {
		t.Errorf("referrals = %d, want 2", got)
	}
	if got := s.count(`SELECT count(*) FROM ledger_entries WHERE merchant_id = $1`, tn.merchant.ID); got != 2 {
		t.Errorf("ledger entries = %d, want 2", got)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 3000, pending: 3000})
	s.waitRecords(tn, 5)
	if got := s.records(tn); len(got) == 5 && got[4] != "accepted 200" {
		t.Errorf("record of the retry = %s, want accepted 200", got[4])
	}
	if err := checkLedger(s); err != nil {
		t.Error(err)
	}
}

// outageLength is how long the broker stays down, from the first sale of
// the outage: longer than the writer retries a message.
const outageLength = 12 * time.Second

// records returns "outcome status" of the tenant's delivery records in
// order of arrival.
func (s *stack) records(tn *tenant) []string {
	s.t.Helper()
	rows, err := s.deps.Pool.Query(context.Background(),
		`SELECT outcome || ' ' || http_status FROM inbound_deliveries WHERE merchant_id = $1 ORDER BY received_at`, tn.merchant.ID)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			s.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// published returns "outcome status" of a merchant's delivery records in
// the order the broker holds them: keyed by merchant, they share a
// partition. A record published twice (a publish that timed out and landed
// anyway, then published again) counts at its first place.
func published(t *testing.T, addr string, merchantID uuid.UUID) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := kafka.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := conn.ReadPartitions(topic.Deliveries)
	_ = conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[uuid.UUID]bool{}
	for _, p := range parts {
		lc, err := kafka.DialLeader(ctx, "tcp", addr, topic.Deliveries, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		_ = lc.SetDeadline(time.Now().Add(30 * time.Second))
		last, err := lc.ReadLastOffset()
		if err != nil {
			t.Fatal(err)
		}
		for next := int64(0); next < last; {
			from := next
			if _, err := lc.Seek(next, kafka.SeekAbsolute); err != nil {
				t.Fatal(err)
			}
			batch := lc.ReadBatch(1, 10<<20)
			for {
				m, err := batch.ReadMessage()
				if err != nil {
					break
				}
				next = m.Offset + 1
				var d struct {
					ID         uuid.UUID `json:"id"`
					MerchantID uuid.UUID `json:"merchant_id"`
					Outcome    string    `json:"outcome"`
					HTTPStatus int       `json:"http_status"`
				}
				if err := json.Unmarshal(m.Value, &d); err == nil && d.MerchantID == merchantID && !seen[d.ID] {
					seen[d.ID] = true
					out = append(out, d.Outcome+" "+strconv.Itoa(d.HTTPStatus))
				}
			}
			if err := batch.Close(); err != nil {
				t.Fatalf("read %s/%d: %v", topic.Deliveries, p.ID, err)
			}
			if next == from {
				t.Fatalf("read %s/%d: nothing from offset %d of %d", topic.Deliveries, p.ID, from, last)
			}
		}
		_ = lc.Close()
	}
	return out
}
