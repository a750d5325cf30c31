package dashboard

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
	"testing"
)

// TestVendoredChecksums checks every vendored file against the SHA256SUMS
// written when it was copied from its npm package.
func TestVendoredChecksums(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"assets/vendor/htmx", "assets/vendor/uplot"} {
		sums, err := assetFS.ReadFile(dir + "/SHA256SUMS")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
		for _, line := range lines {
			want, name, ok := strings.Cut(line, "  ")
			if !ok {
				t.Fatalf("%s/SHA256SUMS: bad line %q", dir, line)
			}
			b, err := assetFS.ReadFile(path.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); got != want {
				t.Errorf("%s/%s: sha256 %s, SHA256SUMS says %s", dir, name, got, want)
			}
		}
		if _, err := assetFS.ReadFile(dir + "/LICENSE"); err != nil {
			t.Errorf("%s: no LICENSE: %v", dir, err)
		}
	}
}
