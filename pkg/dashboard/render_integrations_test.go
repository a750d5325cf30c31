package dashboard

import (
	"net/http/httptest"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/webhook"
)

// integrationsDataForRender is the Integrations page as its handler fills
// it: Guru's account token saved at at, one delivery; Yampi refused.
var (
	guruDescriptor, _  = provider.Lookup(provider.Guru)
	yampiDescriptor, _ = provider.Lookup(provider.Yampi)
)

func integrationsDataForRender(at time.Time, mid uuid.UUID, d inbound.Delivery) integrationsData {
	guru := &merchant.Integration{Provider: provider.Guru, AccountToken: "tok", UpdatedAt: at}
	return integrationsData{Platforms: []platformView{
		{Provider: "guru", Name: "Guru", HasAPI: true, Configured: true, UpdatedAt: at, Fields: platformFields(guruDescriptor, guru),
			WebhookURL: merchant.WebhookURL("https://ingest.example.com/", "guru", mid), Deliveries: []inbound.Delivery{d},
			APIMissing: guru.APIMissing(), Pulls: true, CanReconcile: true,
			Runs: []reconcile.Run{{ID: uuid.New(), Provider: "guru", Status: reconcile.StatusSucceeded, StartedAt: at, Seen: 100, Missing: 10, Credited: 9, Reversed: 1},
				{ID: uuid.New(), Provider: "guru", Status: reconcile.StatusFailed, StartedAt: at.Add(-time.Hour), Error: "guru GET transactions: 429"}}},
		{Provider: "yampi", Name: "Yampi", HasAPI: true, Pulls: true, Fields: platformFields(yampiDescriptor, nil), Alert: "integrations.bad_api_url",
			WebhookURL: merchant.WebhookURL("https://ingest.example.com", "yampi", mid),
			APIMissing: (&merchant.Integration{Provider: provider.Yampi}).APIMissing()},
	}}
}

// webhookDataForRender is an endpoint's page right after its creation,
// with one logged test attempt.
func webhookDataForRender(e endpointView, at time.Time) webhookData {
	r := httptest.NewRequest("GET", "/dashboard/webhooks/"+e.ID.String(), nil)
	return webhookData{Endpoint: e, NewSecret: "whsec_the-new-secret", Events: eventChoices(e.Events), URL: e.URL,
		Attempts: []webhook.Attempt{{ID: uuid.New(), EventType: "webhook.test", Status: webhook.StatusSuccess, Attempt: 1,
			ResponseStatus: 200, DurationMS: 5, CreatedAt: at}},
		Tabs:       StatusTabs(r, "status", []Tab{{Label: "webhooks.log_all", Count: 1}, {Label: "webhooks.log_success", Value: "success", Count: 1}}),
		Pagination: NewPagination(r, logsPerPage, 1)}
}
