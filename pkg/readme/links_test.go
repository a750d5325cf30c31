package readme

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from this package's directory.
const root = "../.."

// skipDirs are directories whose Markdown is not the repository's own:
// tools, data, dependencies.
var skipDirs = map[string]bool{".git": true, ".tools": true, ".data": true, "node_modules": true, "bin": true}

// TestMarkdownLinksResolve reads every Markdown file of the repository and
// fails on a relative link (inline or reference-style) whose file or
// directory does not exist, that leaves the repository, or whose #anchor
// names no heading of the Markdown file it points at. Links with a scheme
// (https:, mailto:) are not followed: only public sites may be linked that
// way, and checking them needs the network.
func TestMarkdownLinksResolve(t *testing.T) {
	files := markdownFiles(t)
	if len(files) < 10 {
		t.Fatalf("found %d Markdown files under %s; the walk is wrong", len(files), root)
	}
	checked := 0
	for _, f := range files {
		for _, l := range linksOf(t, f) {
			checked++
			if msg := checkLink(f, l.target); msg != "" {
				t.Errorf("%s:%d: link %q %s", rel(f), l.line, l.target, msg)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d relative links; the parser is wrong", checked)
	}
}

// TestDocsNameNoPrivateFiles fails when a Markdown file or a Go comment
// sends the reader to the team's private design pages, which are not in
// the repository: the decisions are in docs/decisions.md.
func TestDocsNameNoPrivateFiles(t *testing.T) {
	private := regexp.MustCompile(`shared/design|shared/spec|interface-spec\.md|\.\./shared/`)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] || d.Name() == "vendor" && filepath.Dir(p) == root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".md") && !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "links_test.go") {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if private.MatchString(line) {
				t.Errorf("%s:%d names a file outside the repository: %s", rel(p), i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// markdownFiles lists the repository's Markdown files. A vendor directory
// at the root is Go's copy of dependencies; pkg/dashboard/assets/vendor is
// ours and is read.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] || d.Name() == "vendor" && filepath.Dir(p) == root {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(strings.ToLower(d.Name()), ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

type link struct {
	target string
	line   int
}

var (
	// inlineLink is [text](target) or ![alt](target), with an optional
	// title; the target may be written <like this>.
	inlineLink = regexp.MustCompile(`\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)`)
	// refDef is a reference-style definition: [label]: target.
	refDef = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	// codeSpan is inline code, where brackets are not links.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	// scheme marks an absolute URL (https:, mailto:).
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// linksOf returns the relative links of a Markdown file, outside fenced
// code blocks and code spans.
func linksOf(t *testing.T, file string) []link {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []link
	for i, line := range proseLines(string(raw)) {
		if line == "" {
			continue
		}
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, tg := range targets {
			tg = strings.TrimSuffix(strings.TrimPrefix(tg, "<"), ">")
			if tg == "" || scheme.MatchString(tg) || strings.HasPrefix(tg, "//") {
				continue
			}
			out = append(out, link{target: tg, line: i + 1})
		}
	}
	return out
}

// proseLines returns the file's lines with fenced code blocks blanked and
// code spans removed, so that line numbers stay those of the file.
func proseLines(s string) []string {
	lines := strings.Split(s, "\n")
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" ") == "" {
				fence = ""
			}
			lines[i] = ""
			continue
		}
		if f := fenceOpen(trimmed); f != "" && len(line)-len(trimmed) < 4 {
			fence = f
			lines[i] = ""
			continue
		}
		lines[i] = codeSpan.ReplaceAllString(line, "")
	}
	return lines
}

// fenceOpen returns the fence a line opens (``` or ~~~, or longer), or "".
func fenceOpen(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// checkLink returns why a relative link from file is broken, or "".
func checkLink(file, target string) string {
	path, anchor, _ := strings.Cut(target, "#")
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	dest := file
	if path != "" {
		if strings.HasPrefix(path, "/") {
			dest = filepath.Join(root, path)
		} else {
			dest = filepath.Join(filepath.Dir(file), path)
		}
		r, err := filepath.Rel(root, dest)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "points outside the repository"
		}
		if _, err := os.Stat(dest); err != nil {
			return "points at nothing (" + r + " does not exist)"
		}
	}
	if anchor == "" {
		return ""
	}
	if !strings.HasSuffix(strings.ToLower(dest), ".md") {
		return ""
	}
	raw, err := os.ReadFile(dest)
	if err != nil {
		return "has an anchor into a directory"
	}
	if !headingSlugs(string(raw))[strings.ToLower(anchor)] {
		return "names no heading of " + rel(dest) + " (#" + anchor + ")"
	}
	return ""
}

var (
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)
	mdLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// headingSlugs returns the anchors GitHub makes for a Markdown file's
// headings, and any <a name|id> it declares.
func headingSlugs(s string) map[string]bool {
	slugs := map[string]bool{}
	seen := map[string]int{}
	raw := strings.Split(s, "\n")
	for i, line := range proseLinesKeepingCode(raw) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(raw[i], -1) {
			slugs[strings.ToLower(m[1])] = true
		}
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			slugs[s+"-"+strconv.Itoa(n)] = true
		} else {
			slugs[s] = true
		}
		seen[s]++
	}
	return slugs
}

// proseLinesKeepingCode blanks fenced blocks (a "# comment" in a sh block
// is no heading) but keeps code spans, whose text is part of a heading.
func proseLinesKeepingCode(lines []string) []string {
	out := make([]string, len(lines))
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" ") == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOpen(trimmed); f != "" && len(line)-len(trimmed) < 4 {
			fence = f
			continue
		}
		out[i] = line
	}
	return out
}

// slug is GitHub's anchor of a heading: its rendered text lowercased,
// every character but letters, digits, marks, '-' and '_' dropped, and each
// space turned into '-'.
func slug(heading string) string {
	text := mdLink.ReplaceAllString(heading, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// rel names a file from the repository's root, for messages.
func rel(p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return r
}

// TestSlug pins the anchor rule to GitHub's on headings of this repository.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Rotating `SECRETS_KEY`":                                   "rotating-secrets_key",
		"A sale, from webhook to available balance":                "a-sale-from-webhook-to-available-balance",
		"Reconciliation: finding the sales whose webhook was lost": "reconciliation-finding-the-sales-whose-webhook-was-lost",
		"Outages: PostgreSQL or the broker away":                   "outages-postgresql-or-the-broker-away",
		"Personal data (LGPD)":                                     "personal-data-lgpd",
		"Issue 19 so far — the pulls (2026-11-27)":                 "issue-19-so-far--the-pulls-2026-11-27",
		"See [the page](x.md) and <b>this</b>":                     "see-the-page-and-this",
		"Configuração do João":                                     "configuração-do-joão",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}
