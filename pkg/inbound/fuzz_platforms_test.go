package inbound

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/convida/convida/pkg/provider"
)

// fixtures returns every body of testdata/dir.
func fixtures(f *testing.F, dir string) [][]byte {
	f.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil || len(names) == 0 {
		f.Fatalf("no fixtures in testdata/%s: %v", dir, err)
	}
	var out [][]byte
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzHotmart checks that Hotmart never panics and only fails with
// Unauthorized or Unprocessable. The seeds carry the test hottok, so
// mutations reach the mapping.
func FuzzHotmart(f *testing.F) {
	for _, body := range fixtures(f, "hotmart") {
		f.Add(body)
		f.Add(edit(f, body, "data.purchase.price.value", "0.1"))
	}
	f.Add([]byte(`{"event":"PURCHASE_APPROVED","data":{"purchase":{"transaction":1,"price":{"value":1}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := handle(Hotmart(), body, hottok(testHottok), testCreds)
		checkFuzzed(t, provider.Hotmart, out, err)
	})
}

// FuzzKiwify checks the same for Kiwify, each body signed with the test
// token so that mutations reach the parser.
func FuzzKiwify(f *testing.F) {
	for _, body := range fixtures(f, "kiwify") {
		f.Add(body)
		f.Add(edit(f, body, "webhook_event_type", ""))
	}
	f.Add([]byte(`{"webhook_event_type":"order_approved","order_id":7,"Commissions":{"charge_amount":"1"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := handle(Kiwify(), body, kiwifySigned(body, testKiwifyToken), testCreds)
		checkFuzzed(t, provider.Kiwify, out, err)
	})
}

// FuzzEduzz checks the same for Eduzz, each body signed with the test
// secret so that mutations reach the parser.
func FuzzEduzz(f *testing.F) {
	for _, body := range fixtures(f, "eduzz") {
		f.Add(body)
		f.Add(edit(f, body, "data.price.value", "0.1"))
		f.Add(edit(f, body, "data.paidAt", ""))
	}
	f.Add([]byte(`{"event":"myeduzz.invoice_paid","data":{"id":7,"price":{"value":1},"utm":[]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := handle(Eduzz(), body, eduzzSigned(body, testEduzzSecret), testCreds)
		checkFuzzed(t, provider.Eduzz, out, err)
	})
}
