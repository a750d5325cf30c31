package webpage_test

import (
	"html/template"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"github.com/convida/convida/pkg/webpage"
)

// A page is written whole or not at all: the layout around the page with
// the reader's functions, 200 unless the page says otherwise; a missing
// page or a failed execution writes nothing, for the caller to answer 500.
func TestWriteAnswersAWholePageOrNothing(t *testing.T) {
	t.Parallel()
	pages := fstest.MapFS{
		"_layout.html": {Data: []byte(`{{define "layout"}}<main>{{template "body" .}}</main>{{end}}`)},
		"hello.html":   {Data: []byte(`{{define "body"}}{{greet .}}{{end}}`)},
		"broken.html":  {Data: []byte(`{{define "body"}}{{.Missing.Field}}{{end}}`)},
	}
	v, err := webpage.Parse(pages, fstest.MapFS{}, template.FuncMap{"greet": func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	greet := template.FuncMap{"greet": func(name string) string { return "Olá, " + name }}

	w := httptest.NewRecorder()
	if err := v.Write(w, "hello", greet, "Ana", 0); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusOK || w.Body.String() != "<main>Olá, Ana</main>" || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("hello = %d %q %v", w.Code, w.Body, w.Header())
	}
	w = httptest.NewRecorder()
	if err := v.Write(w, "hello", greet, "Bia", http.StatusGone); err != nil || w.Code != http.StatusGone {
		t.Errorf("a page's own status = %d, %v", w.Code, err)
	}
	for _, name := range []string{"nowhere", "broken"} {
		w = httptest.NewRecorder()
		if err := v.Write(w, name, greet, 42, 0); err == nil || w.Body.Len() != 0 || w.Header().Get("Content-Type") != "" {
			t.Errorf("%s: err %v, wrote %q %v", name, err, w.Body, w.Header())
		}
	}
}
