package dashboard

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/convida/convida/pkg/report"
)

// Pagination is one page of a list, read from the request's ?page= and
// written by the template "pagination". A page queries its store with
// Limit() and Offset() and sets Total to the filtered count.
type Pagination struct {
	Page, PerPage, Total int
	path                 string
	query                url.Values
}

// NewPagination reads ?page= (1 when missing or invalid) and keeps the
// request's other parameters (filters, tab) for the links.
func NewPagination(r *http.Request, perPage, total int) Pagination {
	page, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	p := Pagination{Page: page, PerPage: perPage, Total: total, path: r.URL.Path, query: r.URL.Query()}
	if last := p.Pages(); p.Page > last {
		p.Page = last
	}
	return p
}

// Pages is the number of pages, at least 1.
func (p Pagination) Pages() int {
	if p.Total <= 0 || p.PerPage <= 0 {
		return 1
	}
	return (p.Total + p.PerPage - 1) / p.PerPage
}

// Limit and Offset are the page's SQL LIMIT and OFFSET.
func (p Pagination) Limit() int  { return p.PerPage }
func (p Pagination) Offset() int { return (p.Page - 1) * p.PerPage }

func (p Pagination) HasPrev() bool   { return p.Page > 1 }
func (p Pagination) HasNext() bool   { return p.Page < p.Pages() }
func (p Pagination) PrevURL() string { return p.url(p.Page - 1) }
func (p Pagination) NextURL() string { return p.url(p.Page + 1) }

func (p Pagination) url(page int) string {
	q := url.Values{}
	for k, v := range p.query {
		q[k] = v
	}
	q.Set("page", strconv.Itoa(page))
	return p.path + "?" + q.Encode()
}

// Tab is one status tab of a list: a catalogue key, the value of the
// filter parameter ("" for all), and how many rows it holds.
type Tab struct {
	Label, Value string
	Count        int
	URL          string
	Current      bool
}

// AtCap reports whether the tab's count stopped at report.TabCap: it holds
// at least that many ("10000+").
func (t Tab) AtCap() bool { return t.Count >= report.TabCap }

// StatusTabs fills each tab's URL (the request's with param set, the page
// reset) and marks the current one, for the template "tabs".
func StatusTabs(r *http.Request, param string, tabs []Tab) []Tab {
	current := r.URL.Query().Get(param)
	out := make([]Tab, len(tabs))
	for i, t := range tabs {
		q := r.URL.Query()
		q.Del("page")
		if t.Value == "" {
			q.Del(param)
		} else {
			q.Set(param, t.Value)
		}
		t.URL, t.Current = r.URL.Path, t.Value == current
		if enc := q.Encode(); enc != "" {
			t.URL += "?" + enc
		}
		out[i] = t
	}
	return out
}
