package main

import (
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/convida/convida/pkg/program"
)

// TestComposeFile reads docker-compose.yml as compose would (the merge
// key, ${VAR:-default}) and holds it to what docs/operations.md says:
// every setting it passes is one the programs read and loads as they
// would load it; each program's service enters the program the image
// holds, so `docker compose run --rm api merchant create …` runs the
// api's command; the broker accepts the session timeout; METRICS_ADDR is
// on the compose network and never published; TRUSTED_PROXIES is the
// proxy's fixed address; Prometheus scrapes every program.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Services map[string]struct {
			Image       string
			Entrypoint  []string
			Command     []string
			Environment map[string]string
			Ports       []string
			Expose      []string
			Profiles    []string
			Networks    map[string]struct {
				IPv4 string `yaml:"ipv4_address"`
			}
		}
		Networks map[string]struct {
			IPAM struct{ Config []struct{ Subnet string } }
		}
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dockerfile), "COPY --from=build /out/ /convida/") {
		t.Fatal("Dockerfile: the programs are no longer copied into /convida/")
	}
	defaults := regexp.MustCompile(`^\$\{([A-Z_]+)(:-([^}]*)|:\?[^}]*)\}$`)
	for _, name := range []string{"api", "ingest", "ledger", "dispatcher", "scheduler"} {
		svc, ok := file.Services[name]
		if !ok {
			t.Fatalf("docker-compose.yml has no service %s", name)
		}
		if want := []string{"/convida/" + name}; !slices.Equal(svc.Entrypoint, want) || svc.Command != nil {
			t.Errorf("%s: entrypoint %v, command %v; want the entrypoint %v and no command", name, svc.Entrypoint, svc.Command, want)
		}
		if !strings.Contains(string(dockerfile), "./cmd/"+name) {
			t.Errorf("Dockerfile does not build ./cmd/%s", name)
		}
		env := map[string]string{}
		for k, v := range svc.Environment {
			if _, known := settingOf(k); !known {
				t.Errorf("%s: %s is not a setting of the programs", name, k)
			}
			if m := defaults.FindStringSubmatch(v); m != nil {
				v = m[3] // compose's default; a required one (:?) is set below
			}
			env[k] = v
		}
		env["SECRETS_KEY"] = randomKey(t)
		cfg, err := program.LoadConfig(func(k string) string { return env[k] })
		if err != nil {
			t.Errorf("%s: the settings do not load: %v", name, err)
			continue
		}
		if cfg.KafkaSessionTimeout < 6*time.Second || env["KAFKA_SESSION_TIMEOUT"] == "" {
			t.Errorf("%s: KAFKA_SESSION_TIMEOUT %q: a broker refuses below its group.min.session.timeout.ms, 6 s", name, env["KAFKA_SESSION_TIMEOUT"])
		}
		if cfg.MetricsAddr != ":9090" || !slices.Contains(svc.Expose, "9090") {
			t.Errorf("%s: METRICS_ADDR %q, expose %v; want :9090 on the compose network", name, cfg.MetricsAddr, svc.Expose)
		}
		if !strings.HasPrefix(svc.Environment["SECRETS_KEY"], "${SECRETS_KEY:?") {
			t.Errorf("%s: SECRETS_KEY must be required (${SECRETS_KEY:?…}), not defaulted", name)
		}
		for _, p := range svc.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") || strings.HasSuffix(p, ":9090") {
				t.Errorf("%s publishes %s: the programs' ports are for this host (the proxy), and 9090 for nobody", name, p)
			}
		}
		proxy := file.Services["proxy"].Networks["default"].IPv4
		if env["TRUSTED_PROXIES"] != proxy+"/32" {
			t.Errorf("%s: TRUSTED_PROXIES %q, want the proxy's address %s/32", name, env["TRUSTED_PROXIES"], proxy)
		}
	}
	subnets := file.Networks["default"].IPAM.Config
	proxy, err := netip.ParseAddr(file.Services["proxy"].Networks["default"].IPv4)
	if err != nil || len(subnets) != 1 || !netip.MustParsePrefix(subnets[0].Subnet).Contains(proxy) {
		t.Errorf("the proxy's address %v is not in the network's subnet %v", proxy, subnets)
	}
	for name, profile := range map[string]string{"proxy": "tls", "prometheus": "monitoring"} {
		if svc := file.Services[name]; !slices.Equal(svc.Profiles, []string{profile}) {
			t.Errorf("%s: profiles %v, want only with --profile %s", name, svc.Profiles, profile)
		}
	}
	if p := file.Services["prometheus"].Ports; !slices.Equal(p, []string{"127.0.0.1:9090:9090"}) {
		t.Errorf("prometheus publishes %v, want 127.0.0.1:9090:9090 only", p)
	}

	promRaw, err := os.ReadFile("../../deploy/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var prom struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			DNS []struct {
				Names []string
				Port  int
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(promRaw, &prom); err != nil {
		t.Fatal(err)
	}
	if len(prom.ScrapeConfigs) != 1 || len(prom.ScrapeConfigs[0].DNS) != 1 ||
		!slices.Equal(prom.ScrapeConfigs[0].DNS[0].Names, []string{"api", "ingest", "ledger", "dispatcher", "scheduler"}) ||
		prom.ScrapeConfigs[0].DNS[0].Port != 9090 || !slices.Equal(prom.RuleFiles, []string{"alerts.yml"}) {
		t.Errorf("prometheus.yml does not scrape every program's :9090 with alerts.yml: %+v", prom)
	}
}

// settingOf reports whether name is a setting of the programs.
func settingOf(name string) (program.Setting, bool) {
	for _, s := range program.Settings {
		if s.Name == name {
			return s, true
		}
	}
	return program.Setting{}, false
}
