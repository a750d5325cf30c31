package archtest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxLines is the most lines a Go file under pkg/ or cmd/ may have (issue
// 21): a longer file holds more than one subject, and a newcomer looking
// for one of them cannot guess where it is.
const maxLines = 500

// sizedFile is a Go file, by its path from the module root, and its length
// in lines.
type sizedFile struct {
	path  string
	lines int
}

// TestFileSize fails naming every Go file under pkg/ and cmd/, tests
// included, longer than maxLines.
func TestFileSize(t *testing.T) {
	root := moduleRoot(t)
	var files []sizedFile
	for _, dir := range []string{"pkg", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, sizedFile{path: filepath.ToSlash(rel), lines: lineCount(raw)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) == 0 {
		t.Fatal("no Go file under pkg/ and cmd/: the walk looked in the wrong place")
	}
	for _, msg := range oversized(files) {
		t.Error(msg)
	}
}

// oversized names, in path order, each file longer than maxLines.
func oversized(files []sizedFile) []string {
	var found []string
	for _, f := range files {
		if f.lines > maxLines {
			found = append(found, fmt.Sprintf("%s has %d lines, over %d: split it by subject (one file per resource or concern)",
				f.path, f.lines, maxLines))
		}
	}
	slices.Sort(found)
	return found
}

// lineCount counts lines as wc -l does, plus a last line without its
// newline.
func lineCount(raw []byte) int {
	n := bytes.Count(raw, []byte("\n"))
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		n++
	}
	return n
}

// TestFileSizeCatchesPlanted checks the rule on made-up files: a 501-line
// file is named, a 500-line one is not, and lines are counted as an editor
// shows them.
func TestFileSizeCatchesPlanted(t *testing.T) {
	found := oversized([]sizedFile{{"pkg/made/up_test.go", 501}, {"pkg/made/fits.go", 500}, {"cmd/made/main.go", 12}})
	want := []string{"pkg/made/up_test.go has 501 lines, over 500: split it by subject (one file per resource or concern)"}
	if !slices.Equal(found, want) {
		t.Errorf("oversized = %q, want %q", found, want)
	}
	for _, c := range []struct {
		text string
		want int
	}{{"", 0}, {"package a\n", 1}, {"package a\n\nfunc f() {}", 3}, {strings.Repeat("//\n", 501), 501}} {
		if got := lineCount([]byte(c.text)); got != c.want {
			t.Errorf("lineCount(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}
