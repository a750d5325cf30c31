// Package archtest keeps the picture of docs/architecture.md true: it reads
// `go list` and the import blocks of every Go file and fails when a package
// imports across the layers the wrong way, or when imports are not in
// goimports -local order; and it fails on a Go file over 500 lines
// (size_test.go).
package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/convida/convida"

// The layers of pkg/. Every package under pkg/ must be in exactly one, so a
// new package is placed on purpose.
var (
	// leaves import nothing of ours but other leaves.
	leaves = []string{"apperr", "money", "ids", "jsontime", "event", "retry", "batch", "secretbox", "respond", "openapi", "procstat",
		"netguard", "clientip", "bounds", "accesslog", "l10n", "formguard", "webpage"}
	// domain packages hold the rules.
	domain = []string{"campaign", "member", "merchant", "referral", "ledger", "redemption", "webhook", "inbound",
		"outbox", "creator", "fraud", "report", "audit", "retention", "privacy", "reconcile", "provider", "intake", "portalaccess"}
	// adapters talk to a dependency (platform: the platforms' APIs).
	adapters = []string{"postgres", "redisx", "kafkabus", "embeddedbroker", "platform", "mailer"}
	// contracts bind domain types to an adapter's wire (topic names and
	// codecs over kafkabus); test support builds real parts for tests.
	contracts   = []string{"topic"}
	testSupport = []string{"testenv", "testenv/backlog", "archtest", "e2e", "readme", "openapi/openapitest"}
	// edges receive the outside world.
	edges = []string{"httpapi", "ingest", "dispatch", "scheduler", "dashboard", "portal"}
	// wiring builds and runs the roles; only cmd/ may import it.
	wiring = []string{"program"}
)

// forbiddenInCore are the drivers the domain and the leaves never see.
var forbiddenInCore = []string{
	"github.com/jackc/pgx/v5",
	"github.com/segmentio/kafka-go",
	"github.com/redis/go-redis/v9",
}

// routerPackage is the edges' router: the leaves the edges share for their
// HTTP answers and logs (respond, accesslog) read its routes, the domain
// never sees it.
const routerPackage = "github.com/gorilla/mux"

type listed struct {
	ImportPath                string
	Dir                       string
	Imports                   []string // direct, non-test
	Deps                      []string // transitive, non-test
	GoFiles                   []string
	TestGoFiles, XTestGoFiles []string
}

func goList(t *testing.T) []listed {
	t.Helper()
	root := moduleRoot(t)
	cmd := exec.Command("go", "list", "-deps=false", "-json", "./...")
	cmd.Dir = root
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

// layerOf names the layer of one of our import paths ("" for cmd/ and
// outside packages).
func layerOf(path string) string {
	rel, ok := strings.CutPrefix(path, module+"/pkg/")
	if !ok {
		return ""
	}
	for _, l := range []struct {
		name string
		pkgs []string
	}{{"leaf", leaves}, {"domain", domain}, {"adapter", adapters}, {"contract", contracts},
		{"test support", testSupport}, {"edge", edges}, {"wiring", wiring}} {
		if slices.Contains(l.pkgs, rel) {
			return l.name
		}
	}
	return "unplaced"
}

func short(path string) string { return strings.TrimPrefix(path, module+"/") }

// TestImportRules enforces the direction of imports (docs/architecture.md,
// "Layers") on the module as it is.
func TestImportRules(t *testing.T) {
	for _, v := range violations(goList(t)) {
		t.Error(v)
	}
}

// violations are how pkgs break the layers: domain and leaves import no
// driver, no net/http, no adapter, edge or wiring; adapters import no edge,
// no wiring and no other adapter; an edge imports no other edge (what two
// edges share lives below them) and not the wiring; only cmd/ imports
// program; the money rules (moneyRules) do not even depend on the guarded
// dialer.
func violations(pkgs []listed) []string {
	var found []string
	bad := func(format string, args ...any) { found = append(found, fmt.Sprintf(format, args...)) }
	for _, p := range pkgs {
		layer := layerOf(p.ImportPath)
		if layer == "unplaced" {
			bad("%s is in no layer: add it to a list in pkg/archtest/imports_test.go and to docs/architecture.md", short(p.ImportPath))
			continue
		}
		if rel := strings.TrimPrefix(p.ImportPath, module+"/pkg/"); slices.Contains(moneyRules, rel) {
			for _, dep := range p.Deps {
				if dep == module+"/pkg/platform" || dep == module+"/pkg/netguard" {
					bad("%s depends on %s: the money rules never sit on the platforms' HTTP clients; declare a port", short(p.ImportPath), short(dep))
				}
			}
		}
		for _, dep := range p.Deps {
			depLayer := layerOf(dep)
			switch layer {
			case "leaf", "domain":
				for _, f := range forbiddenInCore {
					if dep == f || strings.HasPrefix(dep, f+"/") {
						bad("%s (%s) depends on %s: the domain never sees a driver; declare an interface and implement it in an adapter", short(p.ImportPath), layer, f)
					}
				}
				if layer == "domain" && (dep == routerPackage || strings.HasPrefix(dep, routerPackage+"/")) {
					bad("%s (domain) depends on %s: the router belongs to the edges", short(p.ImportPath), dep)
				}
				if depLayer == "adapter" || depLayer == "contract" || depLayer == "edge" || depLayer == "wiring" {
					bad("%s (%s) depends on %s (%s): the domain imports no adapter, edge or wiring", short(p.ImportPath), layer, short(dep), depLayer)
				}
				if layer == "leaf" && depLayer == "domain" {
					bad("%s (leaf) depends on %s (domain): a leaf imports only other leaves", short(p.ImportPath), short(dep))
				}
			case "adapter", "contract":
				if depLayer == "edge" || depLayer == "wiring" {
					bad("%s (%s) depends on %s (%s): an adapter imports no edge; move the type it needs down to the domain", short(p.ImportPath), layer, short(dep), depLayer)
				}
			case "test support":
				if depLayer == "edge" || depLayer == "wiring" {
					if !strings.HasSuffix(p.ImportPath, "/e2e") {
						bad("%s (test support) depends on %s (%s)", short(p.ImportPath), short(dep), depLayer)
					}
				}
			case "edge":
				if depLayer == "wiring" {
					bad("%s (edge) depends on %s: only cmd/ imports program", short(p.ImportPath), short(dep))
				}
				if depLayer == "edge" && dep != p.ImportPath {
					bad("%s (edge) depends on %s (edge): an edge imports no other edge; move what both use to a leaf or the domain", short(p.ImportPath), short(dep))
				}
			}
		}
		if layer == "domain" && slices.Contains(p.Imports, "net/http") && !slices.Contains(httpDomainDebt, p.ImportPath[len(module)+len("/pkg/"):]) {
			bad("%s (domain) imports net/http: the rules know no transport; the HTTP side belongs to an edge or an adapter", short(p.ImportPath))
		}
		if layer == "adapter" {
			for _, imp := range p.Imports {
				if layerOf(imp) == "adapter" {
					bad("%s (adapter) imports %s (adapter): adapters do not import each other", short(p.ImportPath), short(imp))
				}
			}
		}
		if !strings.HasPrefix(p.ImportPath, module+"/cmd/") && layer != "wiring" {
			for _, imp := range p.Imports {
				if layerOf(imp) == "wiring" {
					bad("%s imports %s: only cmd/ imports program", short(p.ImportPath), short(imp))
				}
			}
		}
	}
	sort.Strings(found)
	return slices.Compact(found)
}

// httpDomainDebt are the domain packages that still import net/http: the
// platforms' and the webhook receivers' HTTP clients and the signature
// checks on http.Header. The list only shrinks; a package leaves it when
// its HTTP side moves to an adapter.
var httpDomainDebt = []string{"inbound", "webhook"}

// moneyRules are the packages that decide what a wallet holds: neither
// the platforms' clients nor the guarded dialer is among their
// dependencies, so that no HTTP concern sits under the money rules.
var moneyRules = []string{"ledger", "member", "referral"}

// TestImportRulesCatchPlanted plants one violation of each rule in a
// made-up package list and checks violations names it: a rule that could
// not fail would not guard anything.
func TestImportRulesCatchPlanted(t *testing.T) {
	pkg := func(name string) string { return module + "/pkg/" + name }
	for _, c := range []struct {
		name string
		p    listed
		want string
	}{
		{"edge imports an edge", listed{ImportPath: pkg("dashboard"), Deps: []string{pkg("httpapi")}}, "an edge imports no other edge"},
		{"domain imports net/http", listed{ImportPath: pkg("ledger"), Imports: []string{"net/http"}, Deps: []string{"net/http"}}, "imports net/http"},
		{"domain imports a driver", listed{ImportPath: pkg("referral"), Deps: []string{"github.com/jackc/pgx/v5"}}, "never sees a driver"},
		{"leaf imports a driver", listed{ImportPath: pkg("money"), Deps: []string{"github.com/redis/go-redis/v9"}}, "never sees a driver"},
		{"domain imports the router", listed{ImportPath: pkg("member"), Deps: []string{routerPackage}}, "the router belongs to the edges"},
		{"domain imports an adapter", listed{ImportPath: pkg("campaign"), Deps: []string{pkg("postgres")}}, "imports no adapter"},
		{"leaf imports the domain", listed{ImportPath: pkg("respond"), Deps: []string{pkg("member")}}, "a leaf imports only other leaves"},
		{"adapter imports an edge", listed{ImportPath: pkg("postgres"), Deps: []string{pkg("dashboard")}}, "an adapter imports no edge"},
		{"adapter imports an adapter", listed{ImportPath: pkg("redisx"), Imports: []string{pkg("postgres")}}, "adapters do not import each other"},
		{"edge imports the wiring", listed{ImportPath: pkg("ingest"), Imports: []string{pkg("program")}, Deps: []string{pkg("program")}}, "only cmd/ imports program"},
		{"a package in no layer", listed{ImportPath: pkg("misc")}, "is in no layer"},
		{"the ledger on the guarded dialer", listed{ImportPath: pkg("ledger"), Deps: []string{pkg("netguard")}}, "the money rules never sit on the platforms' HTTP clients"},
		{"a member on the platforms' clients", listed{ImportPath: pkg("member"), Deps: []string{pkg("merchant"), pkg("platform")}}, "the money rules never sit on the platforms' HTTP clients"},
	} {
		t.Run(c.name, func(t *testing.T) {
			found := violations([]listed{c.p})
			if !slices.ContainsFunc(found, func(v string) bool { return strings.Contains(v, c.want) }) {
				t.Errorf("violations = %q, want one saying %q", found, c.want)
			}
		})
	}
	if found := violations([]listed{{ImportPath: pkg("dashboard"), Deps: []string{pkg("accesslog"), pkg("member")}}}); len(found) != 0 {
		t.Errorf("an edge using a leaf and the domain: violations %q, want none", found)
	}
}

// TestImportOrder checks every Go file's imports are grouped as
// `goimports -local github.com/convida/convida` writes them: the standard
// library, then third-party modules, then this module, each group apart.
func TestImportOrder(t *testing.T) {
	fset := token.NewFileSet()
	for _, p := range goList(t) {
		files := slices.Concat(p.GoFiles, p.TestGoFiles, p.XTestGoFiles)
		for _, name := range files {
			path := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			if msg := checkGroups(fset, f.Imports); msg != "" {
				rel, _ := filepath.Rel(moduleRoot(t), path)
				t.Errorf("%s: %s (run goimports -local %s -w %s)", rel, msg, module, rel)
			}
		}
	}
}

// importClass orders the groups: 0 standard library, 1 third party, 2 ours.
func importClass(path string) int {
	switch {
	case path == module || strings.HasPrefix(path, module+"/"):
		return 2
	case strings.Contains(strings.SplitN(path, "/", 2)[0], "."):
		return 1
	default:
		return 0
	}
}

// checkGroups reports how specs break the grouping, or "" when they keep it:
// a blank line separates groups, a group holds one class, and classes
// come in order, each in one group.
func checkGroups(fset *token.FileSet, specs []*ast.ImportSpec) string {
	lastLine, lastClass, groupClass := 0, -1, -1
	for i, s := range specs {
		path, _ := strconv.Unquote(s.Path.Value)
		class := importClass(path)
		line := fset.Position(s.Pos()).Line
		newGroup := i == 0 || line > lastLine+1
		switch {
		case newGroup && class <= lastClass:
			return fmt.Sprintf("%s starts a new group after the group it belongs to", path)
		case !newGroup && class != groupClass:
			return fmt.Sprintf("%s shares a group with imports of another kind (standard, third-party, %s)", path, module)
		}
		if newGroup {
			groupClass = class
		}
		lastLine, lastClass = fset.Position(s.End()).Line, class
	}
	return ""
}
