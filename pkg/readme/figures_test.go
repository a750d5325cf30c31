package readme

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// number is a figure as the docs write it: 2,447, 121.7, 7.
var number = regexp.MustCompile(`[0-9]+(?:[.,][0-9]+)*`)

// TestScalingQuotesCurrentFigures fails when docs/scaling.md's "Where the
// time goes today" states a number that docs/benchmarks.md's "Current
// figures" does not: the plan must quote the measurements, not older ones.
func TestScalingQuotesCurrentFigures(t *testing.T) {
	current := sectionOf(t, root+"/docs/benchmarks.md", "## Current figures")
	quote := sectionOf(t, root+"/docs/scaling.md", "## Where the time goes today")
	have := number.FindAllString(current, -1)
	quoted := number.FindAllString(quote, -1)
	if len(quoted) < 20 {
		t.Fatalf("docs/scaling.md quotes %d numbers; the section is not the quote any more", len(quoted))
	}
	for _, n := range quoted {
		if !slices.Contains(have, n) {
			t.Errorf("docs/scaling.md quotes %s, which the current figures of docs/benchmarks.md do not hold", n)
		}
	}
}

// sectionOf returns the text under heading (a whole line) up to the next
// heading of the same or a higher level, links' targets left out.
func sectionOf(t *testing.T, file, heading string) string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	level := strings.Index(heading, " ")
	var b strings.Builder
	in := false
	for _, line := range strings.Split(string(raw), "\n") {
		if in && strings.HasPrefix(line, "#") {
			if n := len(line) - len(strings.TrimLeft(line, "#")); n <= level {
				break
			}
		}
		if line == heading {
			in = true
			continue
		}
		if in {
			b.WriteString(linkTarget.ReplaceAllString(line, "]") + "\n")
		}
	}
	if !in {
		t.Fatalf("%s has no heading %q", rel(file), heading)
	}
	return b.String()
}

// linkTarget is the (target) of a Markdown link, whose digits (a dated
// anchor) are no figure.
var linkTarget = regexp.MustCompile(`\]\([^)]*\)`)
