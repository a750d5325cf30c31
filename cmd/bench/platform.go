package main

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/redemption"
)

// Credentials and store of the fake Yampi; the integration the redeem
// phase configures carries them.
const (
	yampiUserToken = "bench-yampi-user-token"
	yampiSecretKey = "bench-yampi-secret-key"
	yampiAlias     = "loja-bench"
)

// fakeYampi plays Yampi's promocode API on a loopback listener: it
// accepts every POST /{alias}/pricing/promocodes carrying the right
// credentials, after delay, and records the coupons it was asked for.
type fakeYampi struct {
	url   string
	srv   *http.Server
	delay time.Duration
	// codeKey is the key the stack's dispatcher derives coupon codes with.
	codeKey []byte

	mu      sync.Mutex
	coupons map[string]int    // coupon code → POSTs that asked for it
	values  map[string]string // coupon code → value asked, in reais
	wrong   []string          // requests that were not a valid coupon creation (first ones)
	bad     int
}

func startFakeYampi(delay time.Duration, codeKey []byte) (*fakeYampi, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	y := &fakeYampi{url: "http://" + ln.Addr().String(), delay: delay, codeKey: codeKey,
		coupons: map[string]int{}, values: map[string]string{}}
	y.srv = &http.Server{Handler: http.HandlerFunc(y.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := y.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			y.reject("serve: " + err.Error())
		}
	}()
	return y, nil
}

func (y *fakeYampi) close() { _ = y.srv.Close() }

// serve answers a coupon creation 200 {"data":{...}} as Yampi does, and
// anything else 404. A creation must carry the credentials, and its code
// must be the one the executor derives from the Idempotency-Key it sends
// (the redemption id).
func (y *fakeYampi) serve(w http.ResponseWriter, r *http.Request) {
	time.Sleep(y.delay)
	var body struct {
		Code  string          `json:"code"`
		Value json.RawMessage `json:"value"`
	}
	raw, _ := io.ReadAll(r.Body)
	id, idErr := uuid.Parse(r.Header.Get("Idempotency-Key"))
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/"+yampiAlias+"/pricing/promocodes":
		y.reject(r.Method + " " + r.URL.Path)
		http.NotFound(w, r)
		return
	case r.Header.Get("User-Token") != yampiUserToken || r.Header.Get("User-Secret-Key") != yampiSecretKey:
		y.reject("wrong credentials")
		w.WriteHeader(http.StatusUnauthorized)
		return
	case json.Unmarshal(raw, &body) != nil || idErr != nil || body.Code != redemption.CouponCodeFor(y.codeKey, id):
		y.reject("unexpected body or Idempotency-Key: " + clipText(string(raw), 200))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	y.mu.Lock()
	y.coupons[body.Code]++
	y.values[body.Code] = string(body.Value)
	n := len(y.coupons)
	y.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"id": n, "code": body.Code, "value": body.Value}})
}

func (y *fakeYampi) reject(what string) {
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.bad++; len(y.wrong) < 5 {
		y.wrong = append(y.wrong, what)
	}
}

// seen returns a copy of the coupons asked for, their values and the
// rejected requests.
func (y *fakeYampi) seen() (coupons map[string]int, values map[string]string, rejected int, examples []string) {
	y.mu.Lock()
	defer y.mu.Unlock()
	return maps.Clone(y.coupons), maps.Clone(y.values), y.bad, slices.Clone(y.wrong)
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
