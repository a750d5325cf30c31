// Package openapi holds the OpenAPI 3.1 document of Convida's HTTP
// interfaces (openapi.yaml, embedded): the member-facing and administrative
// API, the inbound webhook receivers of the ingest program and the
// operational endpoints. The API serves it as JSON at
// GET /api/v1/openapi.json; the contract tests load it to validate every
// response they see (package openapitest).
package openapi

import (
	"context"
	_ "embed" // openapi.yaml
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
)

//go:embed openapi.yaml
var source []byte

// YAML returns the document as written. The caller must not modify it.
func YAML() []byte { return source }

// Document returns the document as JSON. It is computed once; every call
// returns the same bytes, which the caller must not modify. The error is
// non-nil only when the embedded document does not load, which the package's
// tests rule out.
func Document() ([]byte, error) { return document() }

var document = sync.OnceValues(func() ([]byte, error) {
	doc, err := Load()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: marshal: %w", err)
	}
	return b, nil
})

// DocumentAt returns Document with its servers rewritten for a deployment:
// apiURL replaces the URL of the top-level server (the API program) and
// ingestURL that of the ingest receivers' servers; an empty one keeps the
// document's development default. The result is computed once per pair and
// must not be modified.
func DocumentAt(apiURL, ingestURL string) ([]byte, error) {
	if apiURL == "" && ingestURL == "" {
		return Document()
	}
	key := apiURL + "\x00" + ingestURL
	if b, ok := served.Load(key); ok {
		return b.([]byte), nil
	}
	raw, err := Document()
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	setServerURL(doc["servers"], apiURL)
	paths, _ := doc["paths"].(map[string]any)
	for _, item := range paths {
		if item, ok := item.(map[string]any); ok {
			setServerURL(item["servers"], ingestURL)
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	served.Store(key, b)
	return b, nil
}

// served caches DocumentAt by its arguments (a process serves one or two).
var served sync.Map

// setServerURL sets the url of every server object of a servers list.
func setServerURL(servers any, url string) {
	list, _ := servers.([]any)
	for _, s := range list {
		if s, ok := s.(map[string]any); ok && url != "" {
			s["url"] = url
		}
	}
}

// Load parses the embedded document, resolves its references, registers the
// string formats its schemas use (email, uuid, uri) on it and validates it,
// examples included. Every call returns a new document, so the caller may
// modify it (a test router drops the servers, for instance).
func Load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.Context = context.Background()
	doc, err := loader.LoadFromData(source)
	if err != nil {
		return nil, fmt.Errorf("openapi: load: %w", err)
	}
	for name, v := range formats {
		doc.SetStringFormatValidator(name, v)
	}
	if err := doc.Validate(loader.Context, openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("openapi: invalid document: %w", err)
	}
	return doc, nil
}

// formats are the string formats of the document that kin-openapi does not
// check by itself, checked the way the code produces them.
var formats = map[string]openapi3.StringFormatValidator{
	// email: a bare address, as member.ValidEmail accepts it.
	"email": openapi3.NewCallbackValidator(func(s string) error {
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s || a.Name != "" || len(s) > 254 {
			return errors.New("not a bare email address")
		}
		return nil
	}),
	"uuid": openapi3.NewCallbackValidator(func(s string) error {
		if _, err := uuid.Parse(s); err != nil || len(s) != 36 {
			return errors.New("not a UUID in its canonical form")
		}
		return nil
	}),
	// uri: an absolute URL with a scheme and a host.
	"uri": openapi3.NewCallbackValidator(func(s string) error {
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return errors.New("not an absolute URL")
		}
		return nil
	}),
}
