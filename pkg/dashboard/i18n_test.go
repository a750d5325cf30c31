package dashboard

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rawLocale is locales/<lang>.json as written: a key's value is its text,
// or an object of plural forms.
func rawLocale(t *testing.T, lang string) map[string]any {
	t.Helper()
	b, err := localeFS.ReadFile("locales/" + lang + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("locales/%s.json: %v", lang, err)
	}
	return m
}

// Every text exists in both languages, so no page shows a raw key or falls
// back to English in Portuguese; a plural text has every form its
// language's CLDR rules pick for some number.
func TestCatalogueComplete(t *testing.T) {
	t.Parallel()
	en, pt := rawLocale(t, English), rawLocale(t, Portuguese)
	for key := range en {
		if _, ok := pt[key]; !ok {
			t.Errorf("%q has no Portuguese text", key)
		}
	}
	for key, v := range pt {
		if _, ok := en[key]; !ok {
			t.Errorf("%q has no English text", key)
		}
		if _, isPlural := v.(map[string]any); isPlural != isMap(en[key]) {
			t.Errorf("%q is plural in one language only", key)
		}
	}
	for _, lang := range []string{English, Portuguese} {
		for key, v := range rawLocale(t, lang) {
			if !isMap(v) {
				continue
			}
			for _, n := range []int{0, 1, 2, 21, 1000000} {
				if err := texts.CheckPlural(lang, key, n); err != nil {
					t.Errorf("%s %q for %d: %v", lang, key, n, err)
				}
			}
		}
	}
}

func isMap(v any) bool { _, ok := v.(map[string]any); return ok }

// TestPlural checks that the form comes from each language's CLDR rule: a
// Portuguese "one" covers 0 as well, an English one does not.
func TestPlural(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lang string
		n    int
		want string
	}{
		{English, 0, "sales to go"}, {English, 1, "sale to go"}, {English, 2, "sales to go"},
		{Portuguese, 0, "venda para chegar"}, {Portuguese, 1, "venda para chegar"}, {Portuguese, 2, "vendas para chegar"},
	} {
		if got := plural(tc.lang, "creators.sales_to_go", tc.n); got != tc.want {
			t.Errorf("plural(%s, %d) = %q, want %q", tc.lang, tc.n, got, tc.want)
		}
	}
	if got := translate(Portuguese, "creators.sales_to_go"); got != "vendas para chegar" {
		t.Errorf("translate of a plural = %q, want its other form", got)
	}
	if got := plural(English, "members.title", 1); got != "Members" {
		t.Errorf("plural of a plain text = %q, want the text", got)
	}
}

var (
	// templateKeyRe finds a literal key a template translates.
	templateKeyRe = regexp.MustCompile(`(?:\{\{-?\s*|\()(?:t|plural) "([^"]+)"`)
	// templatePrefixRe finds the literal start of a key a template builds.
	templatePrefixRe = regexp.MustCompile(`\(print "([^"]+)"`)
	// actionRe finds a template's actions, and quotedRe a quoted text in one.
	actionRe = regexp.MustCompile(`\{\{.*?\}\}`)
	quotedRe = regexp.MustCompile(`"([^"]*)"`)
	// keyLikeRe is what a key looks like in Go, "<page>.<what>", and
	// fileRe what a file name does.
	keyLikeRe = regexp.MustCompile(`^[a-z_]+(\.[a-z0-9_]+)+$`)
	fileRe    = regexp.MustCompile(`\.(csv|html|js|css|json)$`)
)

// TestCatalogueKeysUsed fails when a template or the package's Go names a
// key that the catalogue lacks, and when the catalogue holds a text that
// nothing names: neither whole nor by a prefix that code completes
// ("problem.code." + code).
func TestCatalogueKeysUsed(t *testing.T) {
	t.Parallel()
	keys := texts.Texts(English)
	spaces := map[string]bool{}
	for key := range keys {
		spaces[key[:strings.IndexByte(key+".", '.')]] = true
	}
	named, prefixes := map[string]bool{}, map[string]bool{}
	pages, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		b, _ := templateFS.ReadFile(p)
		for _, m := range templateKeyRe.FindAllStringSubmatch(string(b), -1) {
			if _, ok := keys[m[1]]; !ok {
				t.Errorf("%s: {{t %q}} has no text", p, m[1])
			}
		}
		for _, m := range templatePrefixRe.FindAllStringSubmatch(string(b), -1) {
			prefixes[m[1]] = true
		}
		for _, a := range actionRe.FindAllString(string(b), -1) {
			for _, m := range quotedRe.FindAllStringSubmatch(a, -1) {
				named[m[1]] = true
			}
		}
	}
	for _, s := range goStrings(t) {
		named[s] = true
		switch {
		case strings.HasSuffix(s, ".") || strings.HasSuffix(s, "_"):
			prefixes[s] = true
		case keyLikeRe.MatchString(s) && !fileRe.MatchString(s) && spaces[s[:strings.IndexByte(s, '.')]]:
			if _, ok := keys[s]; !ok {
				t.Errorf("Go names %q, which has no text", s)
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		if named[key] || slices.ContainsFunc(slices.Collect(maps.Keys(prefixes)), func(p string) bool { return strings.HasPrefix(key, p) }) {
			continue
		}
		t.Errorf("%q: no template or code names it; remove it from locales/", key)
	}
}

// goStrings are the string literals of the package's non-test Go files.
func goStrings(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					out = append(out, s)
				}
			}
			return true
		})
	}
	return out
}
