package handlers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// dynamicGateBenchContacts is how many contacts one change of the benchmark brings into the segment.
const dynamicGateBenchContacts = 500

// BenchmarkDynamicSegmentGate measures what the lead gate adds to a contact change that brings contacts into
// a dynamic segment linked to an active campaign: a bulk field change (PATCH /contacts) of 500 contacts by an
// API key under a policy that allows it (the contacts read and locked before the change and read again after
// it in a savepoint, the action counted, the 500 leads enrolled at once) against the same change by a
// signed-in person, which the gate lets through and leaves to the periodic enrolment. Every iteration
// changes contacts that match nothing yet, made untimed.
func BenchmarkDynamicSegmentGate(b *testing.B) {
	env := apitest.New(b)
	ctx := context.Background()
	boot := env.Bootstrap(b, "acme")
	person := env.Owner(b, "acme")
	box := campMailbox(b, env, boot.OrganizationID, "sales@acme.example", 50)
	key := newKey(b, person, api.CreateAPIKey{Name: "agent", Permissions: int64(auth.FullAccess), RateLimitPerMinute: api.NewOptInt(auth.MaxRateLimitPerMinute)})
	agent := env.Client(b, key.Secret)
	_, err := person.AgentPoliciesCreate(ctx, &api.AgentPolicy{Name: "bench", APIKeyID: api.NewOptUUID(key.ID),
		Capabilities: []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemCampaignLaunch}, MailboxIds: []uuid.UUID{box},
		MaxRecipientsPerRun: dynamicGateBenchContacts, MaxRecipientsPerDay: 1 << 30, MaxActionsPerDay: 1 << 30,
		ExpiresAt: time.Now().Add(24 * time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	hot := segCreate(b, person, api.SegmentCreate{Name: "Hot", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindDynamic),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{
			{Name: "stage", Value: "hot", Type: api.ContactCustomFieldFilterTypeEqual}}})}).ID
	camp := campCreate(b, person, api.CampaignCreate{Name: "Active", SegmentIds: []uuid.UUID{hot}, Steps: []api.CampaignStepCreate{
		{Subject: api.NewOptString("Hello"), BodyPlain: api.NewOptString("Hi there")}}}).ID
	createContacts(b, person, api.ContactCreate{Email: "first@client.example", Campaigns: []uuid.UUID{camp}})
	if _, err := person.CampaignsStart(ctx, api.CampaignsStartParams{ID: camp}); err != nil {
		b.Fatal(err)
	}

	batch := 0
	fresh := func(b *testing.B) []uuid.UUID {
		batch++
		in := make([]api.ContactCreate, dynamicGateBenchContacts)
		for i := range in {
			in[i] = api.ContactCreate{Email: fmt.Sprintf("p%d.%d@client.example", batch, i)}
		}
		out := createContacts(b, person, in...)
		ids := make([]uuid.UUID, len(out))
		for i, c := range out {
			ids[i] = c.ID
		}
		return ids
	}
	change := func(b *testing.B, c *api.Client, ids []uuid.UUID) {
		res, err := c.ContactsBulkUpdate(ctx, &api.ContactBulkUpdateRequest{Contacts: ids, Fields: []api.ContactBulkFieldOp{
			{Type: api.ContactBulkFieldOpTypeEDIT, Key: "stage", Value: api.NewOptString("hot")}}}, api.ContactsBulkUpdateParams{})
		if _, ok := res.(*api.ContactsBulkUpdateOKApplicationJSON); err != nil || !ok {
			b.Fatal(res, err)
		}
	}
	run := func(b *testing.B, c *api.Client) {
		for b.Loop() {
			b.StopTimer()
			ids := fresh(b)
			b.StartTimer()
			change(b, c, ids)
		}
	}
	change(b, person, fresh(b)) // warm both paths: connections, prepared statements
	change(b, agent, fresh(b))
	if n := orgInt(b, env, boot.OrganizationID, `SELECT count(*) FROM campaign_leads WHERE campaign_id = $1`, camp); n != 1+dynamicGateBenchContacts {
		b.Fatalf("the agent's change enrolled %d leads", n-1)
	}
	b.Run("baseline", func(b *testing.B) { run(b, person) })
	b.Run("outflow", func(b *testing.B) { run(b, agent) })
}
