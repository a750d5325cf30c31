package inbound

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/provider"
)

const (
	testToken   = "tok_guru_0123456789abcdef0123456789abcde" // 40 characters, like Guru's
	testSecret  = "wh_test_secret"
	placeholder = "REPLACE_WITH_THE_MERCHANT_ACCOUNT_TOKEN_40"
)

const (
	testHottok      = "hottok_0123456789abcdefABCDEF"
	testKiwifyToken = "kiwify_wh_token_9876"
	testEduzzSecret = "eduzz_wh_secret_5432"
)

// Credentials are a merchant's webhook secrets by platform, as these
// tests write them; handle hands an adapter the one of its platform.
type Credentials struct {
	GuruAccountToken, YampiWebhookSecret, HotmartHottok, KiwifyWebhookToken, EduzzWebhookSecret string
}

// handle is a.Handle with the secret of a's platform in c.
func handle(a Adapter, raw []byte, header http.Header, c Credentials) (Outcome, error) {
	secret := map[string]string{provider.Guru: c.GuruAccountToken, provider.Yampi: c.YampiWebhookSecret,
		provider.Hotmart: c.HotmartHottok, provider.Kiwify: c.KiwifyWebhookToken, provider.Eduzz: c.EduzzWebhookSecret}[a.Provider()]
	return a.Handle(raw, header, secret)
}

var testCreds = Credentials{GuruAccountToken: testToken, YampiWebhookSecret: testSecret, HotmartHottok: testHottok,
	KiwifyWebhookToken: testKiwifyToken, EduzzWebhookSecret: testEduzzSecret}

// want is the expected result of one Handle call: an event, an ignored
// delivery, or an error code.
type want struct {
	event   *OrderEvent
	ignored bool
	code    apperr.Code
}

// mustFixture returns the bytes of testdata/name.
func mustFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
	if err != nil {
		tb.Fatalf("read fixture: %v", err)
	}
	return b
}

// guruFixture returns testdata/guru/name with api_token set to token.
func guruFixture(tb testing.TB, name, token string) []byte {
	tb.Helper()
	return bytes.ReplaceAll(mustFixture(tb, "guru/"+name), []byte(placeholder), []byte(token))
}

// edit returns body with the JSON text value at the dotted path, or with the
// key removed when value is "". Missing intermediate objects are created.
func edit(tb testing.TB, body []byte, path, value string) []byte {
	tb.Helper()
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		tb.Fatalf("edit %s: decode: %v", path, err)
	}
	keys := strings.Split(path, ".")
	obj := doc
	for _, k := range keys[:len(keys)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	last := keys[len(keys)-1]
	if value == "" {
		delete(obj, last)
	} else {
		obj[last] = json.RawMessage(value)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		tb.Fatalf("edit %s: encode: %v", path, err)
	}
	return out
}

// signed returns a header carrying body's Yampi signature under secret.
func signed(body []byte, secret string) http.Header {
	h := http.Header{}
	h.Set(YampiSignatureHeader, base64.StdEncoding.EncodeToString(yampiSignature(body, secret)))
	return h
}

// with returns ev after applying change to it.
func with(ev *OrderEvent, change func(*OrderEvent)) *OrderEvent {
	change(ev)
	return ev
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// checkOutcome compares one Handle result with w.
func checkOutcome(t *testing.T, out Outcome, err error, w want) {
	t.Helper()
	if w.code != "" {
		var e *apperr.Error
		if !errors.As(err, &e) || e.Code != w.code {
			t.Fatalf("Handle() = %+v, %v; want an *apperr.Error with code %q", out, err, w.code)
		}
		if out != (Outcome{}) {
			t.Errorf("Handle() outcome = %+v with an error, want the zero Outcome", out)
		}
		return
	}
	if err != nil {
		t.Fatalf("Handle() error = %v, want nil", err)
	}
	if out.Ignored != w.ignored {
		t.Fatalf("Handle() Ignored = %v (reason %q), want %v", out.Ignored, out.Reason, w.ignored)
	}
	if w.ignored {
		if out.Event != nil || out.Reason == "" {
			t.Errorf("Handle() ignored outcome = %+v, want no event and a reason", out)
		}
		return
	}
	if out.Event == nil {
		t.Fatalf("Handle() event = nil, want %+v", w.event)
	}
	got := *out.Event
	if got.OccurredAt.Location() != time.UTC {
		t.Errorf("OccurredAt location = %v, want UTC", got.OccurredAt.Location())
	}
	if !got.OccurredAt.Equal(w.event.OccurredAt) {
		t.Errorf("OccurredAt = %v, want %v", got.OccurredAt, w.event.OccurredAt)
	}
	got.OccurredAt = w.event.OccurredAt
	if got != *w.event {
		t.Errorf("Handle() event =\n%+v\nwant\n%+v", got, *w.event)
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	for _, name := range provider.Names() {
		a, ok := Lookup(name)
		if !ok || a.Provider() != name {
			t.Errorf("Lookup(%q) = %v, %v; want the %s adapter", name, a, ok, name)
		}
	}
	for _, name := range []string{"", "GURU", "stripe", "yampi "} {
		if a, ok := Lookup(name); ok || a != nil {
			t.Errorf("Lookup(%q) = %v, %v; want nil, false", name, a, ok)
		}
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{`"abc"`, "abc", false},
		{`42`, "42", false},
		{`null`, "", false},
		{`"42"`, "42", false},
		{`-1`, "", true},
		{`4.2`, "", true},
		{`1e3`, "", true},
		{`true`, "", true},
		{`{}`, "", true},
	}
	for _, tt := range tests {
		var got struct {
			V text `json:"v"`
		}
		err := decode([]byte(`{"v": `+tt.in+` }`), &got)
		if (err != nil) != tt.wantErr || string(got.V) != tt.want {
			t.Errorf("decode text %s = %q, %v; want %q, error %v", tt.in, got.V, err, tt.want, tt.wantErr)
		}
	}
}

func TestMaybe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{`{"code": "X"}`, "X", false},
		{`null`, "", false},
		{`[]`, "", false},
		{`[ ]`, "", false},
		{`[{"code": "X"}]`, "", true},
		{`"X"`, "", true},
		{`7`, "", true},
	}
	for _, tt := range tests {
		var got struct {
			V maybe[struct {
				Code string `json:"code"`
			}] `json:"v"`
		}
		err := decode([]byte(`{"v": `+tt.in+`}`), &got)
		if (err != nil) != tt.wantErr || got.V.V.Code != tt.want {
			t.Errorf("decode maybe %s = %q, %v; want %q, error %v", tt.in, got.V.V.Code, err, tt.want, tt.wantErr)
		}
	}
}

// The caller tells a delivery refused before it authenticated (anyone's)
// from one refused after (the merchant's platform's) by ErrNotAuthenticated.
func TestErrorsBeforeAuthenticationAreMarked(t *testing.T) {
	t.Parallel()
	guru := guruFixture(t, "transaction-approved.json", testToken)
	yampi := mustFixture(t, "yampi/order-paid.json")
	badAmount := edit(t, guru, "payment.total", "97.999")
	yampiBad := edit(t, yampi, "resource.value_total", `"x"`)
	hotmartBody := mustFixture(t, "hotmart/purchase-approved.json")
	kiwifyBody := mustFixture(t, "kiwify/order-approved.json")
	eduzzBody := mustFixture(t, "eduzz/invoice-paid.json")
	eduzzBad := edit(t, eduzzBody, "data.price.value", "97.999")
	tests := []struct {
		name    string
		adapter Adapter
		body    []byte
		header  http.Header
		creds   Credentials
		marked  bool
	}{
		{"guru wrong token", Guru(), guruFixture(t, "transaction-approved.json", "tok_someone_else"), nil, testCreds, true},
		{"guru not configured", Guru(), guru, nil, Credentials{}, true},
		{"guru body not JSON", Guru(), []byte(`{"api_token": `), nil, testCreds, true},
		{"guru bad amount with the right token", Guru(), badAmount, nil, testCreds, false},
		{"yampi missing signature", Yampi(), yampi, nil, testCreds, true},
		{"yampi wrong signature", Yampi(), yampi, signed(yampi, "other"), testCreds, true},
		{"yampi not configured", Yampi(), yampi, signed(yampi, testSecret), Credentials{}, true},
		{"yampi signed body not JSON", Yampi(), []byte(`nope`), signed([]byte(`nope`), testSecret), testCreds, false},
		{"yampi signed bad amount", Yampi(), yampiBad, signed(yampiBad, testSecret), testCreds, false},
		{"hotmart wrong hottok", Hotmart(), hotmartBody, hottok("other"), testCreds, true},
		{"hotmart not configured", Hotmart(), hotmartBody, hottok(testHottok), Credentials{}, true},
		{"hotmart body not JSON", Hotmart(), []byte(`nope`), hottok(testHottok), testCreds, false},
		{"kiwify missing signature", Kiwify(), kiwifyBody, nil, testCreds, true},
		{"kiwify wrong signature", Kiwify(), kiwifyBody, kiwifySigned(kiwifyBody, "other"), testCreds, true},
		{"kiwify not configured", Kiwify(), kiwifyBody, kiwifySigned(kiwifyBody, testKiwifyToken), Credentials{}, true},
		{"kiwify signed body not JSON", Kiwify(), []byte(`nope`), kiwifySigned([]byte(`nope`), testKiwifyToken), testCreds, false},
		{"eduzz missing signature", Eduzz(), eduzzBody, nil, testCreds, true},
		{"eduzz wrong signature", Eduzz(), eduzzBody, eduzzSigned(eduzzBody, "other"), testCreds, true},
		{"eduzz not configured", Eduzz(), eduzzBody, eduzzSigned(eduzzBody, testEduzzSecret), Credentials{}, true},
		{"eduzz signed body not JSON", Eduzz(), []byte(`nope`), eduzzSigned([]byte(`nope`), testEduzzSecret), testCreds, false},
		{"eduzz signed bad amount", Eduzz(), eduzzBad, eduzzSigned(eduzzBad, testEduzzSecret), testCreds, false},
	}
	for _, tt := range tests {
		_, err := handle(tt.adapter, tt.body, tt.header, tt.creds)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if got := errors.Is(err, ErrNotAuthenticated); got != tt.marked {
			t.Errorf("%s: errors.Is(%v, ErrNotAuthenticated) = %v, want %v", tt.name, err, got, tt.marked)
		}
		if code := apperr.CodeOf(err); code != apperr.Unauthorized && code != apperr.Unprocessable {
			t.Errorf("%s: code %q", tt.name, code)
		}
	}
}
