package dashboard

import (
	"net/http/httptest"
	"reflect"
	"testing"
)

func TestPagination(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query            string
		perPage, total   int
		page, pages, off int
		prev, next       bool
		nextURL          string
	}{
		{"", 50, 120, 1, 3, 0, false, true, "/dashboard/members?page=2"},
		{"?page=2&status=paid", 50, 120, 2, 3, 50, true, true, "/dashboard/members?page=3&status=paid"},
		{"?page=9", 50, 120, 3, 3, 100, true, false, ""},
		{"?page=-1", 50, 0, 1, 1, 0, false, false, ""},
		{"?page=x", 10, 10, 1, 1, 0, false, false, ""},
	} {
		p := NewPagination(httptest.NewRequest("GET", "/dashboard/members"+tc.query, nil), tc.perPage, tc.total)
		if p.Page != tc.page || p.Pages() != tc.pages || p.Offset() != tc.off || p.HasPrev() != tc.prev || p.HasNext() != tc.next {
			t.Errorf("%q: page %d of %d offset %d prev %v next %v, want %d of %d offset %d prev %v next %v", tc.query,
				p.Page, p.Pages(), p.Offset(), p.HasPrev(), p.HasNext(), tc.page, tc.pages, tc.off, tc.prev, tc.next)
		}
		if tc.next && p.NextURL() != tc.nextURL {
			t.Errorf("%q: next %q, want %q", tc.query, p.NextURL(), tc.nextURL)
		}
	}
}

func TestStatusTabs(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("GET", "/dashboard/referrals?status=paid&page=3&q=ana", nil)
	got := StatusTabs(r, "status", []Tab{{Label: "all", Count: 3}, {Label: "paid", Value: "paid", Count: 2}, {Label: "refunded", Value: "refunded", Count: 1}})
	want := []Tab{
		{Label: "all", Count: 3, URL: "/dashboard/referrals?q=ana"},
		{Label: "paid", Value: "paid", Count: 2, URL: "/dashboard/referrals?q=ana&status=paid", Current: true},
		{Label: "refunded", Value: "refunded", Count: 1, URL: "/dashboard/referrals?q=ana&status=refunded"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("StatusTabs = %+v, want %+v", got, want)
	}
}
