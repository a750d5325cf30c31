package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/chromedp/chromedp"
)

// chromiumPaths are where Debian's chromium package puts the browser.
var chromiumPaths = []string{"chromium", "/usr/bin/chromium", "chromium-browser"}

// MustBrowser starts a headless Debian Chromium with a 1280x900 window and
// returns a chromedp context on one tab, closed at cleanup. It fails (never
// skips) when Chromium is missing: `make test` installs it
// (scripts/ensure-chromium.sh). As root, Chromium needs --no-sandbox.
func MustBrowser(tb testing.TB) context.Context {
	tb.Helper()
	path := ""
	for _, p := range chromiumPaths {
		if found, err := exec.LookPath(p); err == nil {
			path = found
			break
		}
	}
	if path == "" {
		tb.Fatalf("testenv: chromium not found: run scripts/ensure-chromium.sh (apt-get install -y chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	tb.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("testenv: start chromium %s: %v", path, err)
	}
	return ctx
}

// Screenshot saves the whole page as docs/screenshots/<name>.png when the
// environment has SCREENSHOTS=1 (the README's pictures); otherwise it does
// nothing.
func Screenshot(tb testing.TB, ctx context.Context, name string) {
	tb.Helper()
	if os.Getenv("SCREENSHOTS") != "1" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		tb.Fatalf("testenv: screenshot %s: %v", name, err)
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
}
