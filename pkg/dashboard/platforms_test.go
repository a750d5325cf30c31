package dashboard_test

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/platform"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/redemption"
)

// TestEveryPlatformIsWhole iterates the descriptors: a platform is one
// unit, and each one has its inbound adapter, its settings form on the
// dashboard (each setting labelled in both languages, never by its
// catalogue key), its help line, and, where it declares them, its pull and
// its redemption at the platforms' adapter. A platform added as a
// descriptor alone fails here.
func TestEveryPlatformIsWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	pages := map[string]string{
		"en":    e.do(owner, http.MethodGet, "/dashboard/integrations", nil, "Accept-Language", "en").body,
		"pt-BR": e.do(owner, http.MethodGet, "/dashboard/integrations", nil, "Accept-Language", "pt-BR").body,
	}
	var help bytes.Buffer
	program.Help(&help, "ingest", "")
	for _, d := range provider.All() {
		t.Run(d.Name, func(t *testing.T) {
			if a, ok := inbound.Lookup(d.Name); !ok || a.Provider() != d.Name {
				t.Errorf("no inbound adapter for %s", d.Name)
			}
			for lang, page := range pages {
				if !strings.Contains(page, `<html lang="`+lang+`">`) {
					t.Fatalf("the page is not in %s", lang)
				}
				if !strings.Contains(page, `action="/dashboard/integrations/`+d.Name+`"`) {
					t.Errorf("%s: no settings form for %s", lang, d.Name)
				}
				for _, s := range d.Settings {
					label := regexp.MustCompile(`<label for="` + d.Name + "-" + s.Name + `">([^<]*)<`).FindStringSubmatch(page)
					if label == nil || strings.TrimSpace(label[1]) == "" || strings.HasPrefix(label[1], "integrations.") {
						t.Errorf("%s: the %s form has no label for %s: %v", lang, d.Name, s.Name, label)
					}
				}
				if strings.Contains(page, "integrations.") {
					t.Errorf("%s: the page shows a catalogue key: %s", lang, regexp.MustCompile(`integrations\.[a-z_]+`).FindString(page))
				}
			}
			if !strings.Contains(help.String(), program.PlatformHelp(d)+"\n") {
				t.Errorf("ingest --help has no line for %s", d.Name)
			}
			full := merchant.Integration{Provider: d.Name}
			for _, s := range d.Settings {
				if s.Kind != provider.CalledURL {
					full.Set(s, "https://example.com/"+s.Name)
				}
			}
			if d.Can(provider.Pull) {
				if _, err := (&platform.Client{}).Puller(full); err != nil {
					t.Errorf("%s declares a pull, but the platforms' adapter opens none: %v", d.Name, err)
				}
			}
			if d.Redemption != "" {
				_, err := (&platform.Executor{}).Execute(context.Background(), merchant.Integration{Provider: d.Name},
					redemption.Request{RedemptionID: uuid.New(), Type: d.Redemption, Amount: 100})
				if msg := apperr.MessageOf(err); !apperr.Is(err, apperr.Unprocessable) || !strings.Contains(msg, "is not set") {
					t.Errorf("%s declares the redemption %s, but the executor answers %v", d.Name, d.Redemption, err)
				}
			}
		})
	}
}
