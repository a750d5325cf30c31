// Package webpage holds what the server-rendered edges (the dashboard, the
// member's portal) share of their pages: the templates parsed once, each
// page over the shared layout and partials, and the embedded assets served
// under URLs that carry their content hash.
package webpage

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// Views are the pages of an edge, parsed once at start.
type Views struct {
	// Pages are the page templates by name (templates/<name>.html), each
	// a clone of the shared files (templates/_*.html) with the page's own.
	Pages map[string]*template.Template
	// Assets are the content hashes of the assets, by path under the
	// assets' root, for cache busting (?v=).
	Assets map[string]string
}

// Parse reads the templates of templates (the pages and, in files named
// _*.html, what they share) with funcs declared, and hashes the files of
// assets.
func Parse(templates, assets fs.FS, funcs template.FuncMap) (*Views, error) {
	v := &Views{Pages: map[string]*template.Template{}, Assets: map[string]string{}}
	err := fs.WalkDir(assets, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := fs.ReadFile(assets, p)
		sum := sha256.Sum256(b)
		v.Assets[p] = hex.EncodeToString(sum[:6])
		return err
	})
	if err != nil {
		return nil, err
	}
	base, err := template.New("base").Funcs(funcs).ParseFS(templates, "_*.html")
	if err != nil {
		return nil, err
	}
	files, err := fs.Glob(templates, "*.html")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if strings.HasPrefix(name, "_") {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templates, f)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", f, err)
		}
		v.Pages[name] = t
	}
	return v, nil
}

// MustSub is fs.Sub of an embedded directory, whose absence is a build
// defect.
func MustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// AssetHandler serves assets under prefix (".../assets/") with long cache
// headers: their URLs carry the content hash, so a new version is a new
// URL. No directory listings.
func AssetHandler(assets fs.FS, prefix string) http.Handler {
	files := http.StripPrefix(prefix, http.FileServerFS(assets))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		files.ServeHTTP(w, r)
	})
}

// Write answers the page name inside the layout, its template functions
// bound to the reader by funcs, as text/html with status (0: 200). The
// page is executed into a buffer first: on an error (no such page, a
// failed execution; a programming error) nothing is written, and the
// caller logs it and answers 500. The headers the caller set stay.
func (v *Views) Write(w http.ResponseWriter, name string, funcs template.FuncMap, data any, status int) error {
	tpl, ok := v.Pages[name]
	if !ok {
		return fmt.Errorf("no such template %q", name)
	}
	t, err := tpl.Clone()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := t.Funcs(funcs).ExecuteTemplate(&buf, "layout", data); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // a reader gone away is no error of ours
	return nil
}
