package dashboard

import (
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2/memstore"

	"github.com/convida/convida/pkg/apperr"
)

func TestCSV(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	out := NewCSV(w, "members.csv", []string{"name", "balance"})
	for _, row := range [][]string{{"Ana, a", "9.79"}, {"=HYPERLINK(1)", "-1.5"}, {"-cmd", "@x"}} {
		if err := out.Write(row...); err != nil {
			t.Fatal(err)
		}
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	want := "name,balance\n\"Ana, a\",9.79\n'=HYPERLINK(1),-1.5\n'-cmd,'@x\n"
	if w.Body.String() != want {
		t.Errorf("body %q, want %q", w.Body.String(), want)
	}
	if cd := w.Header().Get("Content-Disposition"); !strings.Contains(cd, `filename="members.csv"`) {
		t.Errorf("Content-Disposition %q", cd)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
}

// An export with no row is its header row; nothing is answered before
// the first row or Close, so an error until then can still be a page.
func TestCSVEmpty(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	out := NewCSV(w, "x.csv", []string{"id", "name"})
	if out.Started() || w.Header().Get("Content-Type") != "" {
		t.Fatalf("started before any row: %v %v", out.Started(), w.Header())
	}
	if err := out.Close(); err != nil || w.Body.String() != "id,name\n" {
		t.Errorf("empty export %q (%v), want the header row", w.Body.String(), err)
	}
}

// An export whose store fails before the first row is answered as a page
// (503 while the database does not answer); one that fails after the
// download began is cut, the connection dropped (http.ErrAbortHandler),
// never ended as if whole.
func TestExportCSVFailures(t *testing.T) {
	t.Parallel()
	d, err := New(Config{Access: Access{Sessions: memstore.New()}})
	if err != nil {
		t.Fatal(err)
	}
	down := apperr.Errorf(apperr.ServiceUnavailable, "the database does not answer")
	rows := func(ok int) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			for i := range ok {
				if !yield(strconv.Itoa(i), nil) {
					return
				}
			}
			yield("", down)
		}
	}
	export := func(ok int) (w *httptest.ResponseRecorder, panicked any) {
		w = httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/dashboard/members?format=csv", nil)
		defer func() { panicked = recover() }()
		exportCSV(d, w, r, &Ctx{Lang: English, Loc: time.UTC}, NewCSV(w, "x.csv", []string{"n"}), rows(ok),
			func(s string) []string { return []string{s} })
		return w, nil
	}
	w, panicked := export(0)
	if panicked != nil || w.Code != http.StatusServiceUnavailable || strings.HasPrefix(w.Header().Get("Content-Type"), "text/csv") {
		t.Errorf("failing before any row: %d %q (panic %v), want the 503 page", w.Code, w.Header().Get("Content-Type"), panicked)
	}
	if _, panicked := export(3); panicked != http.ErrAbortHandler {
		t.Errorf("failing after 3 rows: panic %v, want http.ErrAbortHandler", panicked)
	}
}

// An export that takes longer than the server's WriteTimeout (30 s in
// production, 1 s here) is not cut by it: the write deadline moves with
// the rows written.
func TestExportCSVOutlivesTheWriteTimeout(t *testing.T) {
	t.Parallel()
	d, err := New(Config{Access: Access{Sessions: memstore.New()}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2500 // a millisecond each: 2.5 s
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rows := func(yield func(int, error) bool) {
			for i := range n {
				time.Sleep(time.Millisecond)
				if !yield(i, nil) {
					return
				}
			}
		}
		exportCSV(d, w, r, &Ctx{Lang: English, Loc: time.UTC}, NewCSV(w, "slow.csv", []string{"n"}), rows,
			func(i int) []string { return []string{strconv.Itoa(i)} })
	}))
	srv.Config.WriteTimeout = time.Second
	srv.Start()
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || strings.Count(string(body), "\n") != n+1 {
		t.Errorf("read %d lines (%v), want the header and %d rows", strings.Count(string(body), "\n"), err, n)
	}
}
