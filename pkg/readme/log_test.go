package readme

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// checkRequestID checks that answers carry X-Request-Id: a sane incoming one
// is kept, a forged one replaced. The requests are unauthenticated (401 and
// 404), which must be logged too.
func checkRequestID(t *testing.T, sa *standalone) {
	t.Helper()
	for _, c := range []struct {
		url, sent string
		keep      bool
	}{
		{sa.API + "/api/v1/wallet/balance?email=ana@example.com", "trace-0123456789abcdef", true},
		{sa.Ingest + "/nowhere", "bad id\twith \"quotes\"", false},
	} {
		req, _ := http.NewRequest(http.MethodGet, c.url, nil)
		req.Header.Set("X-Request-Id", c.sent)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Header.Get("X-Request-Id")
		if c.keep && got != c.sent || !c.keep && (got == c.sent || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(got)) {
			t.Errorf("GET %s with X-Request-Id %q: answered X-Request-Id %q", c.url, c.sent, got)
		}
	}
}

// logLine is what the checks read of a JSON log line.
type logLine struct {
	Level     string  `json:"level"`
	Logger    string  `json:"logger"`
	Msg       string  `json:"msg"`
	Method    string  `json:"method"`
	Route     *string `json:"route"`
	Status    int     `json:"status"`
	Duration  *any    `json:"duration"`
	Merchant  string  `json:"merchant"`
	RequestID string  `json:"request_id"`
	Member    string  `json:"member"`
	Referral  string  `json:"referral"`
}

// checkLog reads the standalone's log after the walkthrough: a request line
// for every request the walkthrough makes, a line per business event with
// the API's ids, none of the secrets the walkthrough handled (the API key,
// the Guru token, the webhook secret printed in outputs), no connection
// timeout at info, and at most two other lines per request.
func checkLog(t *testing.T, sa *standalone, outputs string) {
	t.Helper()
	raw, err := os.ReadFile(sa.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{"API key": sa.Demo.APIKey, "Guru token": guruToken}
	if s := regexp.MustCompile(`whsec_[A-Za-z0-9+/]{43}=`).FindString(outputs); s != "" {
		secrets["webhook secret"] = s
	} else {
		t.Errorf("no webhook secret in the walkthrough's outputs: the README no longer creates an endpoint?")
	}
	for name, s := range secrets {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the log holds the %s", name)
		}
	}

	requests := map[string]int{} // "METHOD route status" → lines
	events := map[string][]logLine{}
	requestLines, otherLines := 0, 0 // at info or above
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			otherLines++ // the broker's or a library's plain line
			continue
		}
		if l.Level != "debug" && strings.Contains(sc.Text(), "i/o timeout") {
			t.Errorf("a connection's timeout at %s, which kafka-go retries by itself (debug): %s", l.Level, sc.Text())
		}
		if l.Msg != "request" && l.Level != "debug" {
			otherLines++
		}
		if l.Msg == "request" {
			requestLines++
			if l.Route == nil || l.Method == "" || l.Status == 0 || l.Duration == nil || l.RequestID == "" {
				t.Errorf("request line without method, route, status, duration or request id: %s", sc.Text())
			}
			if l.Route != nil && strings.HasPrefix(*l.Route, "/api/v1/") && l.Status != http.StatusUnauthorized &&
				*l.Route != "/api/v1/openapi.json" && l.Merchant != sa.Demo.MerchantID {
				t.Errorf("authenticated request line without the merchant: %s", sc.Text())
			}
			key := l.Method + " " + *l.Route + " " + strconv.Itoa(l.Status)
			requests[key]++
			continue
		}
		events[l.Msg] = append(events[l.Msg], l)
	}
	for key, n := range map[string]int{
		"PUT /api/v1/integrations/{provider} 200":         1,
		"POST /api/v1/campaigns 201":                      1,
		"POST /api/v1/members 201":                        1,
		"GET /api/v1/member/me 200":                       1,
		"POST /api/webhooks/{provider}/{merchant_id} 200": 3,
		"POST /api/webhooks/{provider}/{merchant_id} 401": 1,
		"GET /api/v1/wallet/balance 200":                  4,
		"GET /api/v1/referrals 200":                       1,
		"POST /api/v1/referrals/{id}/approve 200":         1,
		"GET /api/v1/wallet/transactions 200":             2,
		"GET /api/v1/member/referrals 200":                1,
		"POST /api/v1/wallet/redeem 422":                  1,
		"POST /v1/webhooks 201":                           1,
		"GET /v1/webhooks 200":                            1,
		"GET  404":                                        1, // checkRequestID's unrouted path
	} {
		if requests[key] < n {
			t.Errorf("%d request lines %q, want at least %d (all: %v)", requests[key], key, n, requests)
		}
	}
	// What an operator reads: a line per request, and besides them at most
	// two lines per request (the start, a line per business event). The
	// start alone is some 10 lines; a minute of the Kafka readers' idle
	// fetches used to be hundreds.
	if otherLines > 2*requestLines {
		t.Errorf("%d lines at info or above besides the %d request lines, want at most 2 per request", otherLines, requestLines)
	}
	member := regexp.MustCompile(`^mem_[0-9a-f]{32}$`)
	for msg, check := range map[string]func(logLine) bool{
		"sale accepted":      func(l logLine) bool { return member.MatchString(l.Member) },
		"delivery duplicate": func(logLine) bool { return true },
		"delivery rejected":  func(logLine) bool { return true },
		"sale credited":      func(l logLine) bool { return member.MatchString(l.Member) && strings.HasPrefix(l.Referral, "ref_") },
		"referral approved":  func(l logLine) bool { return strings.HasPrefix(l.Referral, "ref_") },
		"refund accepted":    func(l logLine) bool { return member.MatchString(l.Member) },
		"refund applied":     func(l logLine) bool { return strings.HasPrefix(l.Referral, "ref_") },
	} {
		lines := events[msg]
		if len(lines) == 0 {
			t.Errorf("no log line %q", msg)
			continue
		}
		if !check(lines[0]) {
			t.Errorf("log line %q without its ids: %+v", msg, lines[0])
		}
	}
	if t.Failed() {
		t.Logf("the standalone's log:\n%s", raw)
	}
}
