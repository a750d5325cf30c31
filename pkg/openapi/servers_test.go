package openapi_test

import (
	"encoding/json"
	"testing"

	"github.com/convida/convida/pkg/openapi"
)

func TestDocumentAtSetsServers(t *testing.T) {
	t.Parallel()
	b, err := openapi.DocumentAt("https://api.loja.test", "https://hooks.loja.test")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Servers []struct{ URL string } `json:"servers"`
		Paths   map[string]struct {
			Servers []struct{ URL string } `json:"servers"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "https://api.loja.test" {
		t.Errorf("servers = %+v, want the API's public URL", doc.Servers)
	}
	ingest := 0
	for path, item := range doc.Paths {
		for _, s := range item.Servers {
			ingest++
			if s.URL != "https://hooks.loja.test" {
				t.Errorf("%s: server %q, want the ingest's public URL", path, s.URL)
			}
		}
	}
	if ingest == 0 {
		t.Error("no path has the ingest's server")
	}
	def, _ := openapi.Document()
	if same, _ := openapi.DocumentAt("", ""); string(same) != string(def) {
		t.Error("DocumentAt without URLs differs from Document")
	}
}
