package inbound

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, want string
		ok               bool
	}{
		{"guru api_token", `{"api_token":"tok_1234","id":"o1"}`, "{\n  \"api_token\": \"[redacted]\",\n  \"id\": \"o1\"\n}", true},
		{"any depth and case", `{"a":{"User_Secret_Key":"s","list":[{"Password":1},{"x":2}]}}`,
			"{\n  \"a\": {\n    \"User_Secret_Key\": \"[redacted]\",\n    \"list\": [\n      {\n        \"Password\": \"[redacted]\"\n      },\n      {\n        \"x\": 2\n      }\n    ]\n  }\n}", true},
		{"an object or array value goes whole", `{"tokens":{"a":"b"},"secret":[1,2]}`,
			"{\n  \"tokens\": \"[redacted]\",\n  \"secret\": \"[redacted]\"\n}", true},
		{"order and numbers kept", `{"z":97.90,"a":1e3,"m":null,"b":true}`, "{\n  \"z\": 97.90,\n  \"a\": 1e3,\n  \"m\": null,\n  \"b\": true\n}", true},
		{"a token-like value under an innocent name stays", `{"note":"token"}`, "{\n  \"note\": \"token\"\n}", true},
		{"not JSON", `api_token=tok_1234`, "", false},
		{"truncated", `{"api_token":"tok_1234"`, "", false},
		{"trailing data", `{"id":1} {"api_token":"x"}`, "", false},
		{"empty", ``, "", false},
	} {
		got, ok := Redact([]byte(tc.body))
		if ok != tc.ok || string(got) != tc.want {
			t.Errorf("%s: Redact(%s) = %q, %v; want %q, %v", tc.name, tc.body, got, ok, tc.want, tc.ok)
		}
	}
}

// TestRedactFixtures: no body of a platform fixture keeps its credential.
func TestRedactFixtures(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "guru", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Guru fixtures: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, ok := Redact(raw)
		if !ok {
			t.Fatalf("%s: not redacted", f)
		}
		if strings.Contains(string(out), "REPLACE_WITH_THE_MERCHANT_ACCOUNT_TOKEN") || !strings.Contains(string(out), `"api_token": "[redacted]"`) {
			t.Errorf("%s: the account token is still shown:\n%s", f, out)
		}
		if !strings.Contains(string(out), `"Ana Souza"`) {
			t.Errorf("%s: the rest of the body is lost:\n%s", f, out)
		}
	}
}
