package openapi_test

import (
	"os"
	"testing"

	"github.com/convida/convida/pkg/openapi/openapitest"
)

// TestEveryDocumentedResponseExercised is the contract test's last word:
// after the whole suite ran with OPENAPI_EXERCISED_DIR set (as `make test`
// does), every response the document lists — each operation's success and
// each of its errors — must have been received and validated by some test.
// Run alone, without the directory, it has nothing to judge and says so.
func TestEveryDocumentedResponseExercised(t *testing.T) {
	dir := os.Getenv(openapitest.ExercisedDirEnv)
	if dir == "" || os.Getenv("OPENAPI_COVERAGE_CHECK") != "1" {
		t.Skip("run by `make test` after the suite: needs " + openapitest.ExercisedDirEnv + " and OPENAPI_COVERAGE_CHECK=1")
	}
	seen, err := openapitest.ReadExercised(dir)
	if err != nil {
		t.Fatal(err)
	}
	documented := openapitest.Responses(t)
	missing := 0
	for _, e := range documented {
		// 500 is documented (the envelope an unexpected failure gets) but
		// no test may cause one: the Validator fails any test that does.
		if e.Status == 500 {
			continue
		}
		if !seen[e] {
			missing++
			t.Errorf("documented but never exercised: %s", e)
		}
	}
	t.Logf("%d documented responses, %d exercised by the suite, %d missing", len(documented), len(documented)-missing, missing)
}
