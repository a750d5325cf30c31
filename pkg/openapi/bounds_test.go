package openapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/convida/convida/pkg/openapi"
	"github.com/convida/convida/pkg/openapi/openapitest"
)

// servedDocument loads the document as the API serves it at
// /api/v1/openapi.json.
func servedDocument(t *testing.T) *openapi3.T {
	t.Helper()
	raw, err := openapi.DocumentAt("https://api.example.com", "https://ingest.example.com")
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	loader.Context = context.Background()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("the served document does not load: %v", err)
	}
	return doc
}

// TestEveryRequestStringHasMaxLength walks every operation's request body
// (through $ref, allOf, oneOf, anyOf, nested objects and array items) and
// query parameters in the served document, and fails naming each string
// without maxLength and each free-form object (metadata) without its bound
// in bytes (x-max-json-bytes, stated in its description too): no request
// value is unbounded (issue 17). The API enforces each bound
// (TestRequestStringBounds in pkg/e2e).
func TestEveryRequestStringHasMaxLength(t *testing.T) {
	t.Parallel()
	values := openapitest.RequestValues(servedDocument(t))
	strs := 0
	for _, v := range values {
		if v.Object {
			n, ok := v.Schema.Extensions[openapitest.MaxJSONBytesExtension].(float64)
			if !ok || n <= 0 || !strings.Contains(v.Schema.Description, "KiB") {
				t.Errorf("%s: a free-form request object without %s and its bound in the description", v, openapitest.MaxJSONBytesExtension)
			}
			continue
		}
		strs++
		if n, ok := v.MaxLength(); !ok || n == 0 {
			t.Errorf("%s: a request string without maxLength", v)
		}
	}
	// The walk reaches the strings it must: a walker that finds nothing
	// passes vacuously.
	for _, want := range []string{
		"createMember body name", "updateMember body metadata", "putCampaignTiers body tiers[0].name",
		"createWebhook body events[0]", "createCampaign body referee_discount_type", "getMemberMe query name",
		"receiveYampiWebhook body resource.customer.data.name", "receiveGuruWebhook body id",
		"receiveHotmartWebhook body data.purchase.transaction", "receiveKiwifyWebhook body TrackingParameters.sck",
		"receiveKiwifyWebhook query signature", "receiveEduzzWebhook body data.utm.content",
	} {
		found := false
		for _, v := range values {
			found = found || v.Operation+" "+v.In+" "+v.Field == want
		}
		if !found {
			t.Errorf("the walk did not reach %s", want)
		}
	}
	t.Logf("%d request strings, %d free-form objects", strs, len(values)-strs)
}
