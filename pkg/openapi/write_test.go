package openapi

import (
	"os"
	"testing"
)

// TestWriteDocument writes the document as the API serves it (with the
// default servers) to the file named by OPENAPI_JSON_OUT, for the
// independent linter of `make lint-openapi`; without it, it is skipped.
func TestWriteDocument(t *testing.T) {
	path := os.Getenv("OPENAPI_JSON_OUT")
	if path == "" {
		t.Skip("OPENAPI_JSON_OUT not set")
	}
	b, err := DocumentAt("", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
