package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// orgExec runs SQL in the organization's scope (seeding what other issues' APIs will write: campaigns, leads).
func orgExec(t testing.TB, env *apitest.Env, org uuid.UUID, sql string, args ...any) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	}))
}

// orgInt reads one integer with SQL in the organization's scope.
func orgInt(t testing.TB, env *apitest.Env, org uuid.UUID, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, sql, args...).Scan(&n)
	}))
	return n
}

func seedCampaign(t testing.TB, env *apitest.Env, org uuid.UUID, name string) uuid.UUID {
	id := uuid.New()
	orgExec(t, env, org, `INSERT INTO campaigns (organization_id, id, name) VALUES ($1, $2, $3)`, org, id, name)
	return id
}

func seedCategory(t testing.TB, env *apitest.Env, org uuid.UUID, title string) uuid.UUID {
	id := uuid.New()
	orgExec(t, env, org, `INSERT INTO labels (organization_id, id, kind, title, color) VALUES ($1, $2, 'category', $3, '#123456')`, org, id, title)
	return id
}

func createContacts(t testing.TB, c *api.Client, in ...api.ContactCreate) []api.Contact {
	t.Helper()
	out, err := c.ContactsCreate(context.Background(), in, api.ContactsCreateParams{})
	require.NoError(t, err)
	return out
}

func searchContacts(t testing.TB, c *api.Client, body api.ContactSearchRequest, params api.ContactsSearchParams) *api.ContactList {
	t.Helper()
	out, err := c.ContactsSearch(context.Background(), api.NewOptContactSearchRequest(body), params)
	require.NoError(t, err)
	return out
}

func contactEmails(cs []api.Contact) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Email
	}
	return out
}

func sortedEmails(cs []api.Contact) []string {
	out := contactEmails(cs)
	slices.Sort(out)
	return out
}

func TestContactsCreateMatchesAndEnriches(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	camp := seedCampaign(t, env, org, "Q4 outreach")
	cat := seedCategory(t, env, org, "Hot")

	first := createContacts(t, c, api.ContactCreate{
		Email: "Ada Lovelace <ADA@Example.com>", FirstName: api.NewOptString("Ada"), Company: api.NewOptString("Engines"),
		CustomFields: api.NewOptContactCreateCustomFields(api.ContactCreateCustomFields{"industry": "math", "size": "1"}),
		Campaigns:    []uuid.UUID{camp}, Categories: []uuid.UUID{cat},
	})
	require.Len(t, first, 1)
	ada := first[0]
	require.Equal(t, "ada@example.com", ada.Email)
	require.True(t, ada.Subscribed, "subscribed defaults to true")
	require.Equal(t, "unknown", string(ada.VerificationStatus))
	require.Equal(t, []api.MiniCampaign{{ID: camp.String(), Name: "Q4 outreach"}}, ada.Campaigns)
	require.Equal(t, []api.MiniCategory{{ID: cat, Title: "Hot", Color: "#123456"}}, ada.Categories)
	require.WithinDuration(t, time.Now(), ada.CreatedAt, time.Minute)

	// The same address again: sent fields replace, empty ones are kept, custom fields merge key by key.
	again := createContacts(t, c, api.ContactCreate{
		Email: "ada@example.com", LastName: api.NewOptString("Lovelace"), Company: api.NewOptString(""),
		CustomFields: api.NewOptContactCreateCustomFields(api.ContactCreateCustomFields{"size": "2", "industry": ""}),
		Subscribed:   api.NewOptBool(false),
	})
	require.Equal(t, ada.ID, again[0].ID, "matched by address, not duplicated")
	require.Equal(t, "Ada", again[0].FirstName)
	require.Equal(t, "Lovelace", again[0].LastName)
	require.Equal(t, "Engines", again[0].Company, "an empty field is kept")
	require.Equal(t, api.ContactCustomFields{"industry": "math", "size": "2"}, again[0].CustomFields)
	require.False(t, again[0].Subscribed)
	require.Len(t, again[0].Campaigns, 1, "links are kept")

	// Bad input is 400 before anything is written.
	for _, tc := range []struct {
		in   []api.ContactCreate
		code string
	}{
		{[]api.ContactCreate{{Email: "ok@example.com"}, {Email: "not an address"}}, "invalid_email"},
		{[]api.ContactCreate{{Email: "example.com"}}, "invalid_email"},
		{[]api.ContactCreate{{Email: "ok@example.com", Segments: []uuid.UUID{uuid.New()}}}, "unknown_segment"},
		{[]api.ContactCreate{{Email: "ok@example.com", Categories: []uuid.UUID{uuid.New()}}}, "unknown_category"},
		{[]api.ContactCreate{{Email: "ok@example.com", Campaigns: []uuid.UUID{uuid.New()}}}, "unknown_campaign"},
		{[]api.ContactCreate{{Email: "ok@example.com", VerificationStatus: api.NewOptString("splendid")}}, "unknown_verification_status"},
		{[]api.ContactCreate{{Email: "ok@example.com", VerificationStatus: api.NewOptString("ok"), VerificationProvider: api.NewOptString("acme-verify")}}, "unknown_verification_provider"},
		{[]api.ContactCreate{{Email: "ok@example.com", VerificationStatus: api.NewOptString("deliverable"), VerificationProvider: api.NewOptString("zerobounce")}}, "unknown_verification_status"},
		{[]api.ContactCreate{{Email: "ok@example.com", CustomFields: api.NewOptContactCreateCustomFields(api.ContactCreateCustomFields{"bad/key": "x"})}}, "invalid_custom_field"},
		{[]api.ContactCreate{{Email: "ok@example.com", FirstName: api.NewOptString(strings.Repeat("a", 256))}}, "invalid_first_name"},
	} {
		_, err := c.ContactsCreate(ctx, tc.in, api.ContactsCreateParams{})
		requireAPIError(t, err, http.StatusBadRequest, tc.code)
	}
	require.Equal(t, int64(1), orgInt(t, env, org, `SELECT count(*) FROM contacts WHERE organization_id = $1`, org), "nothing half-written")
	require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, http.MethodPost, "/v1/contacts", boot.APIKey, `[]`), "an empty array is 400")

	// Segments are pinned in the same transaction.
	seg := uuid.New()
	orgExec(t, env, org, `INSERT INTO segments (organization_id, id, name, kind) VALUES ($1, $2, 'VIPs', 'static')`, org, seg)
	pinned := createContacts(t, c, api.ContactCreate{Email: "grace@example.com", Segments: []uuid.UUID{seg}})
	require.Equal(t, int64(1), orgInt(t, env, org, `SELECT count(*) FROM segment_pins WHERE organization_id = $1 AND segment_id = $2 AND contact_id = $3 AND include`, org, seg, pinned[0].ID))

	// contact.created fires for hand/API adds; updates raise contact.updated.
	events := orgEventTypes(t, env, org)
	require.Equal(t, 2, countOf(events, "contact.created"))
	require.Equal(t, 1, countOf(events, "contact.updated"))
}

func countOf(vs []string, v string) int {
	n := 0
	for _, x := range vs {
		if x == v {
			n++
		}
	}
	return n
}

func TestContactsCreateMapsForeignVerdicts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)

	cases := []struct {
		status, provider, want, sub, source string
	}{
		{"ok", "", "valid", "", ""},
		{"ok", "millionverifier", "valid", "", "millionverifier"},
		{"catch-all", "", "risky", "catch_all", ""},
		{"do_not_mail", "", "invalid", "", ""},
		{"deliverable", "", "valid", "", ""},
		{"ok_for_all", "", "risky", "catch_all", ""},
		{"Valid", "", "valid", "", ""},
		{"catchall", "NeverBounce", "risky", "catch_all", "neverbounce"},
		{"risky", "service", "risky", "", "service"},
	}
	for i, tc := range cases {
		got := createContacts(t, c, api.ContactCreate{Email: fmt.Sprintf("v%d@example.com", i),
			VerificationStatus: api.NewOptString(tc.status), VerificationProvider: api.NewOptString(tc.provider)})[0]
		require.Equal(t, tc.want, string(got.VerificationStatus), tc.status)
		require.Equal(t, tc.sub, string(got.VerificationSubStatus.Value), tc.status)
		require.Equal(t, "imported", string(got.VerificationSource.Value), tc.status)
		require.Equal(t, tc.source, got.VerificationProvider.Value, tc.status)
		require.True(t, got.VerificationCheckedAt.Set && !got.VerificationCheckedAt.Null)
	}
}

func TestContactsCreateEventsStopAboveOneHundred(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	batch := make([]api.ContactCreate, 101)
	for i := range batch {
		batch[i] = api.ContactCreate{Email: fmt.Sprintf("p%d@example.com", i)}
	}
	require.Len(t, createContacts(t, c, batch...), 101)
	require.Zero(t, countOf(orgEventTypes(t, env, boot.OrganizationID), "contact.created"), "a request adding more than 100 contacts raises none")
	_, err := c.ContactsCreate(context.Background(), make([]api.ContactCreate, 1001), api.ContactsCreateParams{})
	require.Error(t, err)
}

// searchFixture is an organization with contacts that differ along every filter.
type searchFixture struct {
	env                *apitest.Env
	c                  *api.Client
	org                uuid.UUID
	token              string
	camp, camp2        uuid.UUID
	hot, cold          uuid.UUID
	ada, bob, cy, dora api.Contact
}

func newSearchFixture(t *testing.T) searchFixture {
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	f := searchFixture{env: env, c: env.Client(t, boot.APIKey), org: boot.OrganizationID, token: boot.APIKey}
	f.camp, f.camp2 = seedCampaign(t, env, f.org, "One"), seedCampaign(t, env, f.org, "Two")
	f.hot, f.cold = seedCategory(t, env, f.org, "Hot"), seedCategory(t, env, f.org, "Cold")
	mk := func(email, first, last, company string, custom map[string]string, cats []uuid.UUID, camps []uuid.UUID) api.Contact {
		return createContacts(t, f.c, api.ContactCreate{Email: email, FirstName: api.NewOptString(first), LastName: api.NewOptString(last),
			Company: api.NewOptString(company), CustomFields: api.NewOptContactCreateCustomFields(custom), Categories: cats, Campaigns: camps})[0]
	}
	f.ada = mk("ada@engines.example", "Ada", "Lovelace", "Analytical Engines", map[string]string{"industry": "Mathematics", "tier": "gold"}, []uuid.UUID{f.hot}, []uuid.UUID{f.camp, f.camp2})
	f.bob = mk("bob@builders.example", "Bob", "Builder", "Builders Ltd", map[string]string{"industry": "Construction"}, []uuid.UUID{f.hot, f.cold}, []uuid.UUID{f.camp})
	// The SDK sends timestamps to the second: start the second cohort in a later second.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	f.cy = mk("cy@cyborg.example", "Cy", "Borg", "Cyborg Inc", map[string]string{"tier": "silver"}, nil, nil)
	f.dora = mk("dora@explore.example", "Dora", "Explorer", "Maps & Co", nil, []uuid.UUID{f.cold}, nil)
	// Leads in campaign One: Ada replied, Bob was sent a step and opened (by a person).
	orgExec(t, env, f.org, `UPDATE campaign_leads SET state = 'active', sent = 1, replied = 1 WHERE organization_id = $1 AND campaign_id = $2 AND contact_id = $3`, f.org, f.camp, f.ada.ID)
	orgExec(t, env, f.org, `UPDATE campaign_leads SET state = 'active', sent = 1, opened = 1 WHERE organization_id = $1 AND campaign_id = $2 AND contact_id = $3`, f.org, f.camp, f.bob.ID)
	orgExec(t, env, f.org, `UPDATE contacts SET verification_status = 'invalid', verification_source = 'probe' WHERE organization_id = $1 AND id = $2`, f.org, f.dora.ID)
	return f
}

func TestContactsSearchFilters(t *testing.T) {
	t.Parallel()
	f := newSearchFixture(t)
	all := []string{f.ada.Email, f.bob.Email, f.cy.Email, f.dora.Email}
	slices.Sort(all)
	cases := []struct {
		name string
		body api.ContactSearchRequest
		want []api.Contact
	}{
		{"empty body", api.ContactSearchRequest{}, []api.Contact{f.ada, f.bob, f.cy, f.dora}},
		{"query over name", api.ContactSearchRequest{Query: api.NewOptString("lovelace")}, []api.Contact{f.ada}},
		{"query over first and last name", api.ContactSearchRequest{Query: api.NewOptString("Bob Build")}, []api.Contact{f.bob}},
		{"query over email", api.ContactSearchRequest{Query: api.NewOptString("@CYBORG.")}, []api.Contact{f.cy}},
		{"query over company, like characters literal", api.ContactSearchRequest{Query: api.NewOptString("maps & co")}, []api.Contact{f.dora}},
		{"query with percent matches literally", api.ContactSearchRequest{Query: api.NewOptString("%")}, nil},
		{"custom equal, case-insensitive", api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "industry", Value: "mathematics", Type: "equal"}}}, []api.Contact{f.ada}},
		{"custom equal needs the whole value", api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "industry", Value: "math", Type: "equal"}}}, nil},
		{"custom starts_with", api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "industry", Value: "Cons", Type: "starts_with"}}}, []api.Contact{f.bob}},
		{"custom ends_with", api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "tier", Value: "ver", Type: "ends_with"}}}, []api.Contact{f.cy}},
		{"custom contains", api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "industry", Value: "struct", Type: "contains"}}}, []api.Contact{f.bob}},
		{"custom filter is per key", api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "tier", Value: "math", Type: "contains"}}}, nil},
		{"custom filters AND", api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "industry", Value: "m", Type: "starts_with"}, {Name: "tier", Value: "gold", Type: "equal"}}}, []api.Contact{f.ada}},
		{"campaign_ids ALL", api.ContactSearchRequest{CampaignIds: []string{f.camp.String(), f.camp2.String()}}, []api.Contact{f.ada}},
		{"one campaign", api.ContactSearchRequest{CampaignIds: []string{f.camp.String()}}, []api.Contact{f.ada, f.bob}},
		{"lead_status replied", api.ContactSearchRequest{CampaignIds: []string{f.camp.String()}, LeadStatus: api.NewOptString("replied")}, []api.Contact{f.ada}},
		{"lead_status active", api.ContactSearchRequest{CampaignIds: []string{f.camp.String()}, LeadStatus: api.NewOptString("active")}, []api.Contact{f.bob}},
		{"lead_status pending", api.ContactSearchRequest{CampaignIds: []string{f.camp2.String()}, LeadStatus: api.NewOptString("pending")}, []api.Contact{f.ada}},
		{"engagement opened", api.ContactSearchRequest{CampaignIds: []string{f.camp.String()}, Engagement: api.NewOptString("opened")}, []api.Contact{f.bob}},
		{"engagement not_replied", api.ContactSearchRequest{CampaignIds: []string{f.camp.String()}, Engagement: api.NewOptString("not_replied")}, []api.Contact{f.bob}},
		{"engagement not_opened only counts sent leads", api.ContactSearchRequest{CampaignIds: []string{f.camp2.String()}, Engagement: api.NewOptString("not_opened")}, nil},
		{"lead_status AND engagement", api.ContactSearchRequest{CampaignIds: []string{f.camp.String()}, LeadStatus: api.NewOptString("replied"), Engagement: api.NewOptString("opened")}, nil},
		{"category_ids ALL", api.ContactSearchRequest{CategoryIds: []string{f.hot.String(), f.cold.String()}}, []api.Contact{f.bob}},
		{"category one", api.ContactSearchRequest{CategoryIds: []string{f.cold.String()}}, []api.Contact{f.bob, f.dora}},
		{"verification_status", api.ContactSearchRequest{VerificationStatus: api.NewOptContactSearchRequestVerificationStatus("invalid")}, []api.Contact{f.dora}},
		{"min_campaigns", api.ContactSearchRequest{MinCampaigns: api.NewOptInt(1)}, []api.Contact{f.ada, f.bob}},
		{"max_campaigns", api.ContactSearchRequest{MaxCampaigns: api.NewOptInt(0)}, []api.Contact{f.cy, f.dora}},
		{"min and max", api.ContactSearchRequest{MinCampaigns: api.NewOptInt(2), MaxCampaigns: api.NewOptInt(2)}, []api.Contact{f.ada}},
		{"subscribed", api.ContactSearchRequest{Subscribed: api.NewOptBool(true)}, []api.Contact{f.ada, f.bob, f.cy, f.dora}},
		{"unknown segment matches nothing", api.ContactSearchRequest{SegmentIds: []uuid.UUID{uuid.New()}}, nil},
		{"created_after", api.ContactSearchRequest{CreatedAfter: api.NewOptDateTime(f.cy.CreatedAt.Truncate(time.Second))}, []api.Contact{f.cy, f.dora}},
		{"created_before", api.ContactSearchRequest{CreatedBefore: api.NewOptDateTime(f.cy.CreatedAt.Truncate(time.Second))}, []api.Contact{f.ada, f.bob}},
		{"updated_after", api.ContactSearchRequest{UpdatedAfter: api.NewOptDateTime(time.Now().Add(time.Hour))}, nil},
		{"updated_before", api.ContactSearchRequest{UpdatedBefore: api.NewOptDateTime(time.Now().Add(time.Hour))}, []api.Contact{f.ada, f.bob, f.cy, f.dora}},
	}
	for _, tc := range cases {
		got := searchContacts(t, f.c, tc.body, api.ContactsSearchParams{})
		require.Equal(t, sortedEmails(tc.want), sortedEmails(got.Data), tc.name)
		require.Equal(t, int64(len(tc.want)), got.Pagination.Total.Value, tc.name)
	}
	// The category query parameter narrows to one category.
	got := searchContacts(t, f.c, api.ContactSearchRequest{}, api.ContactsSearchParams{Category: api.NewOptUUID(f.hot)})
	require.Equal(t, sortedEmails([]api.Contact{f.ada, f.bob}), sortedEmails(got.Data))

	// Named errors.
	for _, tc := range []struct {
		body api.ContactSearchRequest
		code string
	}{
		{api.ContactSearchRequest{LeadStatus: api.NewOptString("replied")}, "lead_filter_requires_campaign"},
		{api.ContactSearchRequest{Engagement: api.NewOptString("opened"), CampaignIds: []string{f.camp.String(), f.camp2.String()}}, "lead_filter_requires_campaign"},
		{api.ContactSearchRequest{LeadStatus: api.NewOptString("sleeping"), CampaignIds: []string{f.camp.String()}}, "invalid_lead_status"},
		{api.ContactSearchRequest{Engagement: api.NewOptString("loved"), CampaignIds: []string{f.camp.String()}}, "invalid_engagement"},
		{api.ContactSearchRequest{CampaignIds: []string{"nope"}}, "invalid_campaign_ids"},
		{api.ContactSearchRequest{CategoryIds: []string{"nope"}}, "invalid_category_ids"},
		{api.ContactSearchRequest{Query: api.NewOptString(strings.Repeat("q", 201))}, "invalid_query"},
		{api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "no/slash", Value: "x", Type: "equal"}}}, "invalid_custom_field"},
	} {
		_, err := f.c.ContactsSearch(context.Background(), api.NewOptContactSearchRequest(tc.body), api.ContactsSearchParams{})
		requireAPIError(t, err, http.StatusBadRequest, tc.code)
	}
	_, err := f.c.ContactsSearch(context.Background(), api.OptContactSearchRequest{}, api.ContactsSearchParams{Limit: api.NewOptString("lots")})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_limit")
	status := orgRawStatus(t, f.env, http.MethodPost, "/v1/contacts/search", f.token, `{"segment_ids":["not-a-uuid"]}`)
	require.Equal(t, http.StatusBadRequest, status, "a non-UUID segment id is 400")
}

func TestContactsSearchCountsAndLeads(t *testing.T) {
	t.Parallel()
	f := newSearchFixture(t)
	orgExec(t, f.env, f.org, `UPDATE contacts SET subscribed = false WHERE organization_id = $1 AND id = $2`, f.org, f.cy.ID)
	first := searchContacts(t, f.c, api.ContactSearchRequest{Query: api.NewOptString("example")}, api.ContactsSearchParams{Limit: api.NewOptString("2")})
	require.Len(t, first.Data, 2)
	require.Equal(t, int64(4), first.Pagination.Total.Value)
	counts := first.Counts.Value
	require.Equal(t, 4, counts.Total)
	require.Equal(t, 3, counts.Subscribed)
	require.Equal(t, 1, counts.Unsubscribed)
	require.Equal(t, 2, counts.InCampaign)
	require.Equal(t, 4, counts.NotContacted)
	require.ElementsMatch(t, []api.ContactCategoryCount{{CategoryID: f.hot, Count: 2}, {CategoryID: f.cold, Count: 2}}, counts.Categories)
	require.False(t, first.LeadCounts.Set, "lead counts only with exactly one campaign")

	second := searchContacts(t, f.c, api.ContactSearchRequest{Query: api.NewOptString("example")}, api.ContactsSearchParams{Limit: api.NewOptString("2"), Cursor: api.NewOptString(first.Pagination.NextCursor.Value)})
	require.False(t, second.Pagination.Total.Set, "total only on the first page")
	require.False(t, second.Counts.Set, "counts only on the first page")
	require.False(t, second.Pagination.HasMore)

	withCampaign := searchContacts(t, f.c, api.ContactSearchRequest{CampaignIds: []string{f.camp.String()}, LeadStatus: api.NewOptString("replied")}, api.ContactsSearchParams{})
	require.Equal(t, []string{f.ada.Email}, contactEmails(withCampaign.Data))
	lead := withCampaign.Data[0].CampaignLead.Value
	require.Equal(t, api.ContactCampaignProgressStatusReplied, lead.Status)
	require.Equal(t, 1, lead.Sent)
	require.Equal(t, 1, lead.Replied)
	lc := withCampaign.LeadCounts.Value
	require.Equal(t, api.ContactLeadCounts{Total: 2, Processing: 1, Replied: 1, Contacted: 2, Opened: 1, RepliedAny: 1}, lc,
		"lead counts ignore lead_status and engagement")
	require.False(t, searchContacts(t, f.c, api.ContactSearchRequest{}, api.ContactsSearchParams{}).Data[0].CampaignLead.Set)
}

func TestContactsSearchSortsAndCursors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	names := []string{"mia", "ann", "zed", "bea", "kim", "ann", "lou"}
	for i, n := range names {
		createContacts(t, c, api.ContactCreate{Email: fmt.Sprintf("%s%d@example.com", n, i), FirstName: api.NewOptString(n), LastName: api.NewOptString(names[len(names)-1-i])})
	}
	// Half the rows as an import leaves them (outside the search indexes) so paging crosses both arms.
	orgExec(t, env, org, `WITH u AS (UPDATE contacts SET search_ready = false WHERE organization_id = $1 AND first_name IN ('ann', 'kim') RETURNING id)
		INSERT INTO contact_index_pending (organization_id, lo, hi) SELECT $1, id, id FROM u`, org)
	camp := seedCampaign(t, env, org, "C")
	orgExec(t, env, org, `INSERT INTO campaign_leads (organization_id, campaign_id, contact_id) SELECT $1, $2, id FROM contacts WHERE organization_id = $1 AND first_name IN ('zed', 'kim')`, org, camp)

	collect := func(sortBy string, reverse bool) []api.Contact {
		var out []api.Contact
		params := api.ContactsSearchParams{Limit: api.NewOptString("2")}
		body := api.ContactSearchRequest{SortBy: api.NewOptString(sortBy), Reverse: api.NewOptBool(reverse)}
		for range 10 {
			page := searchContacts(t, c, body, params)
			out = append(out, page.Data...)
			if !page.Pagination.HasMore {
				return out
			}
			params.Cursor = api.NewOptString(page.Pagination.NextCursor.Value)
		}
		t.Fatal("paging did not end")
		return nil
	}
	for _, tc := range []struct {
		sort string
		key  func(api.Contact) string
	}{
		{"created_at", func(c api.Contact) string { return c.CreatedAt.Format(time.RFC3339Nano) + c.ID.String() }},
		{"updated_at", func(c api.Contact) string { return c.UpdatedAt.Format(time.RFC3339Nano) + c.ID.String() }},
		{"first_name", func(c api.Contact) string { return c.FirstName + c.ID.String() }},
		{"last_name", func(c api.Contact) string { return c.LastName + c.ID.String() }},
		{"email", func(c api.Contact) string { return c.Email }},
		{"campaign_count", func(c api.Contact) string { return fmt.Sprint(len(c.Campaigns)) + c.ID.String() }},
		{"bogus", func(c api.Contact) string { return c.CreatedAt.Format(time.RFC3339Nano) + c.ID.String() }},
	} {
		for _, reverse := range []bool{false, true} {
			got := collect(tc.sort, reverse)
			require.Len(t, got, len(names), tc.sort)
			keys := make([]string, len(got))
			for i, g := range got {
				keys[i] = tc.key(g)
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			if !reverse {
				slices.Reverse(want)
			}
			require.Equal(t, want, keys, "%s reverse=%v: every contact once, in order", tc.sort, reverse)
		}
	}

	first := searchContacts(t, c, api.ContactSearchRequest{SortBy: api.NewOptString("first_name")}, api.ContactsSearchParams{Limit: api.NewOptString("2")})
	cur := first.Pagination.NextCursor.Value
	_, err := c.ContactsSearch(context.Background(), api.NewOptContactSearchRequest(api.ContactSearchRequest{SortBy: api.NewOptString("email")}), api.ContactsSearchParams{Cursor: api.NewOptString(cur)})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_cursor")
	_, err = c.ContactsSearch(context.Background(), api.NewOptContactSearchRequest(api.ContactSearchRequest{SortBy: api.NewOptString("first_name"), Reverse: api.NewOptBool(true)}), api.ContactsSearchParams{Cursor: api.NewOptString(cur)})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_cursor")
	_, err = c.ContactsSearch(context.Background(), api.OptContactSearchRequest{}, api.ContactsSearchParams{Cursor: api.NewOptString("garbage")})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_cursor")
}

func TestContactsBulkUpdateAndDelete(t *testing.T) {
	t.Parallel()
	f := newSearchFixture(t)
	ctx := context.Background()
	camp3 := seedCampaign(t, f.env, f.org, "Three")

	updated, err := f.c.ContactsBulkUpdate(ctx, &api.ContactBulkUpdateRequest{
		Contacts: []uuid.UUID{f.ada.ID, f.cy.ID, uuid.New()}, AddCampaigns: []uuid.UUID{camp3}, RemoveCampaigns: []uuid.UUID{f.camp2},
		AddCategories: []uuid.UUID{f.cold}, RemoveCategories: []uuid.UUID{f.hot}, Subscribe: api.NewOptBool(false),
		Fields: []api.ContactBulkFieldOp{
			{Type: "ADD", Key: "tier", Value: api.NewOptString("bronze")},
			{Type: "EDIT", Key: "region", Value: api.NewOptString("EU")},
			{Type: "RENAME", Key: "industry", Value: api.NewOptString("sector")},
			{Type: "DELETE", Key: "gone"},
		},
	}, api.ContactsBulkUpdateParams{})
	require.NoError(t, err)
	require.Equal(t, sortedEmails([]api.Contact{f.ada, f.cy}), sortedEmails(updated), "unknown ids are left out")
	for _, u := range updated {
		require.False(t, u.Subscribed)
		require.Equal(t, []api.MiniCategory{{ID: f.cold, Title: "Cold", Color: "#123456"}}, u.Categories)
		require.Equal(t, "EU", u.CustomFields["region"])
		switch u.ID {
		case f.ada.ID:
			require.Equal(t, api.ContactCustomFields{"tier": "gold", "region": "EU", "sector": "Mathematics"}, u.CustomFields, "ADD keeps an existing value")
			require.ElementsMatch(t, []string{"One", "Three"}, []string{u.Campaigns[0].Name, u.Campaigns[1].Name})
		case f.cy.ID:
			require.Equal(t, api.ContactCustomFields{"tier": "silver", "region": "EU"}, u.CustomFields)
		}
	}
	require.Equal(t, 1, countOf(orgEventTypes(t, f.env, f.org), "contact.updated"), "one bulk event")

	// A filter selection answers an empty array and honours exclude.
	res, err := f.c.ContactsBulkUpdate(ctx, &api.ContactBulkUpdateRequest{All: api.NewOptBool(true),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{CategoryIds: []string{f.cold.String()}}),
		Exclude: []uuid.UUID{f.bob.ID}, AddCategories: []uuid.UUID{f.hot}}, api.ContactsBulkUpdateParams{})
	require.NoError(t, err)
	require.Empty(t, res)
	hot := searchContacts(t, f.c, api.ContactSearchRequest{CategoryIds: []string{f.hot.String()}}, api.ContactsSearchParams{})
	require.Equal(t, sortedEmails([]api.Contact{f.ada, f.bob, f.cy, f.dora}), sortedEmails(hot.Data), "bob kept hot from before; the others gained it")

	for _, tc := range []struct {
		req  api.ContactBulkUpdateRequest
		code string
	}{
		{api.ContactBulkUpdateRequest{All: api.NewOptBool(true), Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{Query: api.NewOptString("nobody-here")}), Subscribe: api.NewOptBool(true)}, "empty_selection"},
		{api.ContactBulkUpdateRequest{All: api.NewOptBool(true), Exclude: make([]uuid.UUID, 50001), Subscribe: api.NewOptBool(true)}, "too_many_contacts"},
		{api.ContactBulkUpdateRequest{Subscribe: api.NewOptBool(true)}, "invalid_selection"},
		{api.ContactBulkUpdateRequest{Contacts: []uuid.UUID{f.ada.ID}}, "no_changes"},
		{api.ContactBulkUpdateRequest{Contacts: []uuid.UUID{f.ada.ID}, AddCampaigns: []uuid.UUID{uuid.New()}}, "unknown_campaign"},
		{api.ContactBulkUpdateRequest{Contacts: []uuid.UUID{f.ada.ID}, Fields: []api.ContactBulkFieldOp{{Type: "RENAME", Key: "tier", Value: api.NewOptString("bad/name")}}}, "invalid_custom_field"},
	} {
		_, err := f.c.ContactsBulkUpdate(ctx, &tc.req, api.ContactsBulkUpdateParams{})
		requireAPIError(t, err, http.StatusBadRequest, tc.code)
	}

	// Delete by id list, then by selection.
	require.NoError(t, f.c.ContactsBulkDelete(ctx, api.NewUUIDArrayContactsBulkDeleteReq([]uuid.UUID{f.ada.ID}), api.ContactsBulkDeleteParams{}))
	require.NoError(t, f.c.ContactsBulkDelete(ctx, api.NewContactSelectionContactsBulkDeleteReq(api.ContactSelection{All: api.NewOptBool(true),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{Query: api.NewOptString("builder")})}), api.ContactsBulkDeleteParams{}))
	left := searchContacts(t, f.c, api.ContactSearchRequest{}, api.ContactsSearchParams{})
	require.Equal(t, sortedEmails([]api.Contact{f.cy, f.dora}), sortedEmails(left.Data))
	require.Equal(t, 2, left.Counts.Value.Total, "counts follow deletes")
	err = f.c.ContactsBulkDelete(ctx, api.NewContactSelectionContactsBulkDeleteReq(api.ContactSelection{All: api.NewOptBool(true),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{Query: api.NewOptString("builder")})}), api.ContactsBulkDeleteParams{})
	requireAPIError(t, err, http.StatusBadRequest, "empty_selection")
}

func TestContactsSelectionTooLarge(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	orgExec(t, env, org, `INSERT INTO contacts (organization_id, id, email, created_at)
		SELECT $1, gen_random_uuid(), 'c' || g || '@example.com', now() FROM generate_series(1, 50001) g`, org)
	_, err := c.ContactsBulkUpdate(context.Background(), &api.ContactBulkUpdateRequest{All: api.NewOptBool(true), Subscribe: api.NewOptBool(false)}, api.ContactsBulkUpdateParams{})
	requireAPIError(t, err, http.StatusBadRequest, "selection_too_large")
	require.Zero(t, orgInt(t, env, org, `SELECT count(*) FROM contacts WHERE organization_id = $1 AND NOT subscribed`, org))
	// Excluding one brings it to the cap.
	var one uuid.UUID
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM contacts WHERE organization_id = $1 LIMIT 1`, org).Scan(&one)
	}))
	res, err := c.ContactsBulkUpdate(context.Background(), &api.ContactBulkUpdateRequest{All: api.NewOptBool(true), Exclude: []uuid.UUID{one}, Subscribe: api.NewOptBool(false)}, api.ContactsBulkUpdateParams{})
	require.NoError(t, err)
	require.Empty(t, res)
	require.Equal(t, int64(50000), orgInt(t, env, org, `SELECT count(*) FROM contacts WHERE organization_id = $1 AND NOT subscribed`, org))
	first := searchContacts(t, c, api.ContactSearchRequest{}, api.ContactsSearchParams{})
	require.Equal(t, 50000, first.Counts.Value.Total-first.Counts.Value.Subscribed)

	// A broad text query (more matches than the trigram candidates a selective one gets) and a selective one
	// find the same rows a scan would.
	broad := searchContacts(t, c, api.ContactSearchRequest{Query: api.NewOptString("@example.")}, api.ContactsSearchParams{})
	require.Equal(t, int64(50001), broad.Pagination.Total.Value)
	require.Len(t, broad.Data, 50)
	narrow := searchContacts(t, c, api.ContactSearchRequest{Query: api.NewOptString("C4242@")}, api.ContactsSearchParams{})
	require.Equal(t, []string{"c4242@example.com"}, contactEmails(narrow.Data))
	require.Equal(t, int64(1), narrow.Pagination.Total.Value)
}

func TestContactGetUpdateDeleteLookup(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	hot, cold := seedCategory(t, env, org, "Hot"), seedCategory(t, env, org, "Cold")
	camp := seedCampaign(t, env, org, "One")
	ada := createContacts(t, c, api.ContactCreate{Email: "ada@example.com", FirstName: api.NewOptString("Ada"),
		CustomFields: api.NewOptContactCreateCustomFields(api.ContactCreateCustomFields{"a": "1", "b": "2"}), Categories: []uuid.UUID{hot}})[0]
	createContacts(t, c, api.ContactCreate{Email: "bob@example.com"})

	got, err := c.ContactsGet(ctx, api.ContactsGetParams{ID: ada.ID})
	require.NoError(t, err)
	require.Equal(t, "ada@example.com", got.Email)
	require.Zero(t, got.Engagement.TotalSent)
	require.False(t, got.Suppression.Set)

	// Sent history and a suppression show on the 360 view.
	orgExec(t, env, org, `INSERT INTO send_tasks (organization_id, id, kind, status, contact_id, to_email, sent_at, opened_at)
		VALUES ($1, gen_random_uuid(), 'campaign', 'sent', $2, 'ada@example.com', now(), now())`, org, ada.ID)
	_, err = c.DeliverabilityOpsAddSuppressions(ctx, &api.AddSuppressionsRequest{Entries: suppressionEntries("example.com"), Reason: api.NewOptString("domain asked")})
	require.NoError(t, err)
	got, err = c.ContactsGet(ctx, api.ContactsGetParams{ID: ada.ID})
	require.NoError(t, err)
	require.Equal(t, 1, got.Engagement.TotalSent)
	require.Equal(t, 1, got.Engagement.TotalOpened)
	require.Equal(t, "domain asked", got.Suppression.Value.Reason)

	up, err := c.ContactsUpdate(ctx, &api.ContactUpdate{FirstName: api.NewOptString(""), Company: api.NewOptString("Engines"),
		CustomFields: api.NewOptContactUpdateCustomFields(api.ContactUpdateCustomFields{"a": "", "c": "3"}),
		Campaigns:    []uuid.UUID{camp}, AddCategories: []uuid.UUID{cold}, RemoveCategories: []uuid.UUID{hot}}, api.ContactsUpdateParams{ID: ada.ID})
	require.NoError(t, err)
	require.Equal(t, "", up.FirstName, "PATCH clears")
	require.Equal(t, "Engines", up.Company)
	require.Equal(t, api.ContactCustomFields{"b": "2", "c": "3"}, up.CustomFields, "an empty value removes the key")
	require.Equal(t, []api.MiniCategory{{ID: cold, Title: "Cold", Color: "#123456"}}, up.Categories)
	require.Equal(t, []api.MiniCampaign{{ID: camp.String(), Name: "One"}}, up.Campaigns)
	up, err = c.ContactsUpdate(ctx, &api.ContactUpdate{Campaigns: []uuid.UUID{}}, api.ContactsUpdateParams{ID: ada.ID})
	require.NoError(t, err)
	require.Empty(t, up.Campaigns, "campaigns replace the whole set")

	_, err = c.ContactsUpdate(ctx, &api.ContactUpdate{Email: api.NewOptString("BOB@example.com")}, api.ContactsUpdateParams{ID: ada.ID})
	requireAPIError(t, err, http.StatusConflict, "contact_email_taken")
	_, err = c.ContactsUpdate(ctx, &api.ContactUpdate{Email: api.NewOptString("nope")}, api.ContactsUpdateParams{ID: ada.ID})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_email")
	_, err = c.ContactsUpdate(ctx, &api.ContactUpdate{Categories: []uuid.UUID{uuid.New()}}, api.ContactsUpdateParams{ID: ada.ID})
	requireAPIError(t, err, http.StatusBadRequest, "unknown_category")
	_, err = c.ContactsUpdate(ctx, &api.ContactUpdate{}, api.ContactsUpdateParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "contact_not_found")

	found, err := c.ContactsLookup(ctx, api.ContactsLookupParams{Email: "Ada <ADA@example.com>"})
	require.NoError(t, err)
	require.Equal(t, ada.ID, found.Contact.ID)
	_, err = c.ContactsLookup(ctx, api.ContactsLookupParams{Email: "zed@example.com"})
	requireAPIError(t, err, http.StatusNotFound, "contact_not_found")
	_, err = c.ContactsLookup(ctx, api.ContactsLookupParams{Email: "zed"})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_email")

	require.NoError(t, c.ContactsDelete(ctx, api.ContactsDeleteParams{ID: ada.ID}))
	_, err = c.ContactsGet(ctx, api.ContactsGetParams{ID: ada.ID})
	requireAPIError(t, err, http.StatusNotFound, "contact_not_found")
	requireAPIError(t, c.ContactsDelete(ctx, api.ContactsDeleteParams{ID: ada.ID}), http.StatusNotFound, "contact_not_found")
	require.Equal(t, http.StatusNotFound, orgRawStatus(t, env, http.MethodGet, "/v1/contacts/not-an-id", boot.APIKey, ""), "a malformed id is 404, as an unknown one")
	require.Equal(t, int64(1), orgInt(t, env, org, `SELECT count(*) FROM send_tasks WHERE organization_id = $1 AND contact_id IS NULL`, org), "sent history stays")

	// Another organization sees none of it.
	other := env.Bootstrap(t, "other")
	oc := env.Client(t, other.APIKey)
	_, err = oc.ContactsLookup(ctx, api.ContactsLookupParams{Email: "bob@example.com"})
	requireAPIError(t, err, http.StatusNotFound, "contact_not_found")
}

// Every lead_status and engagement value, over one campaign whose leads are each in one state. opened counts
// people only: a lead opened by a machine alone (machine_opened) is not opened.
func TestContactsSearchEveryLeadStatusAndEngagement(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c, org := env.Client(t, boot.APIKey), boot.OrganizationID
	camp := seedCampaign(t, env, org, "Outreach")
	leads := map[string]string{ // contact local part -> the lead's state and counters
		"unsub":         "state = 'active', sent = 1",
		"bounced":       "state = 'active', sent = 1, bounced = 1",
		"replied":       "state = 'active', sent = 1, opened = 1, replied = 1",
		"failed":        "state = 'failed'",
		"completed":     "state = 'completed', sent = 2, opened = 1, clicked = 1",
		"paused":        "state = 'active', sent = 1, hold_since = now()",
		"active":        "state = 'active', sent = 1, machine_opened = 1",
		"undeliverable": "state = 'undeliverable'",
		"pending":       "state = 'pending'",
	}
	byName := map[string]api.Contact{}
	for name, set := range leads {
		in := api.ContactCreate{Email: name + "@leads.example", Campaigns: []uuid.UUID{camp}}
		if name == "unsub" {
			in.Subscribed = api.NewOptBool(false)
		}
		byName[name] = createContacts(t, c, in)[0]
		orgExec(t, env, org, `UPDATE campaign_leads SET `+set+` WHERE organization_id = $1 AND campaign_id = $2 AND contact_id = $3`,
			org, camp, byName[name].ID)
	}
	outsider := createContacts(t, c, api.ContactCreate{Email: "outsider@leads.example"})[0]
	named := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = byName[n].Email
		}
		slices.Sort(out)
		return out
	}
	search := func(body api.ContactSearchRequest) []string {
		return sortedEmails(searchContacts(t, c, body, api.ContactsSearchParams{}).Data)
	}
	for _, status := range []string{"unsubscribed", "bounced", "replied", "failed", "completed", "paused", "active", "undeliverable", "pending"} {
		want := status
		if status == "unsubscribed" {
			want = "unsub"
		}
		require.Equal(t, named(want), search(api.ContactSearchRequest{CampaignIds: []string{camp.String()}, LeadStatus: api.NewOptString(status)}), status)
	}
	for engagement, want := range map[string][]string{
		"opened":      {"replied", "completed"},
		"not_opened":  {"unsub", "bounced", "paused", "active"},
		"clicked":     {"completed"},
		"not_clicked": {"unsub", "bounced", "replied", "paused", "active"},
		"replied":     {"replied"},
		"not_replied": {"unsub", "bounced", "completed", "paused", "active"},
		"bounced":     {"bounced"},
	} {
		require.Equal(t, named(want...), search(api.ContactSearchRequest{CampaignIds: []string{camp.String()}, Engagement: api.NewOptString(engagement)}), engagement)
	}

	// subscribed both ways.
	require.Equal(t, named("unsub"), search(api.ContactSearchRequest{Subscribed: api.NewOptBool(false)}))
	subscribed := append(named("bounced", "replied", "failed", "completed", "paused", "active", "undeliverable", "pending"), outsider.Email)
	slices.Sort(subscribed)
	require.Equal(t, subscribed, search(api.ContactSearchRequest{Subscribed: api.NewOptBool(true)}))

	// updated_after and updated_before split at an update made in a later second (the SDK sends seconds).
	mark := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(mark.Add(20 * time.Millisecond)))
	_, err := c.ContactsUpdate(context.Background(), &api.ContactUpdate{FirstName: api.NewOptString("Pat")}, api.ContactsUpdateParams{ID: byName["pending"].ID})
	require.NoError(t, err)
	require.Equal(t, named("pending"), search(api.ContactSearchRequest{UpdatedAfter: api.NewOptDateTime(mark)}))
	before := search(api.ContactSearchRequest{UpdatedBefore: api.NewOptDateTime(mark)})
	require.Len(t, before, len(leads))
	require.NotContains(t, before, byName["pending"].Email)
}

// Limits and shapes of the selection and of the bulk routes that the SDK will not send (it checks maxItems
// itself), sent raw; and exclude, which applies only with all.
func TestContactsSelectionLimitsAndShapes(t *testing.T) {
	t.Parallel()
	f := newSearchFixture(t)
	ctx := context.Background()
	rawCode := func(method, path, body string) (int, string) {
		resp := f.env.Do(t, method, path, f.token, strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
		defer func() { _ = resp.Body.Close() }()
		var e api.Error
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Code
	}
	ids := make([]string, 1001)
	for i := range ids {
		ids[i] = `"` + uuid.NewString() + `"`
	}
	list := "[" + strings.Join(ids, ",") + "]"
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPatch, "/v1/contacts", `{"contacts":` + list + `,"subscribe":false}`},
		{http.MethodDelete, "/v1/contacts", list},
		{http.MethodDelete, "/v1/contacts", `{"contacts":` + list + `}`},
		{http.MethodPost, "/v1/contacts/verification", `{"contacts":` + list + `}`},
	} {
		status, code := rawCode(tc.method, tc.path, tc.body)
		require.Equal(t, http.StatusBadRequest, status, "%s %s: 1001 ids", tc.method, tc.path)
		require.Equal(t, "invalid_request", code, "%s %s: the schema's maxItems", tc.method, tc.path)
	}
	// 1000 ids are taken (unknown ones change nothing).
	thousand := make([]uuid.UUID, 1000)
	for i := range thousand {
		thousand[i] = uuid.New()
	}
	thousand[0] = f.ada.ID
	updated, err := f.c.ContactsBulkUpdate(ctx, &api.ContactBulkUpdateRequest{Contacts: thousand, Subscribe: api.NewOptBool(false)}, api.ContactsBulkUpdateParams{})
	require.NoError(t, err)
	require.Equal(t, []string{f.ada.Email}, contactEmails(updated))

	// An empty id array deletes nothing and says so.
	status, code := rawCode(http.MethodDelete, "/v1/contacts", `[]`)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_request", code)
	require.Equal(t, int64(4), orgInt(t, f.env, f.org, `SELECT count(*) FROM contacts WHERE organization_id = $1`, f.org))

	// exclude without all is ignored: the listed contacts are all updated.
	updated, err = f.c.ContactsBulkUpdate(ctx, &api.ContactBulkUpdateRequest{Contacts: []uuid.UUID{f.bob.ID, f.cy.ID}, Exclude: []uuid.UUID{f.bob.ID},
		AddCategories: []uuid.UUID{f.hot}}, api.ContactsBulkUpdateParams{})
	require.NoError(t, err)
	require.Equal(t, sortedEmails([]api.Contact{f.bob, f.cy}), sortedEmails(updated))

	// segment_ids: not a UUID, and more than the filter takes.
	status, code = rawCode(http.MethodPost, "/v1/contacts/search", `{"segment_ids":["not-a-uuid"]}`)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_body", code)
	many := make([]uuid.UUID, 21)
	for i := range many {
		many[i] = uuid.New()
	}
	_, err = f.c.ContactsSearch(ctx, api.NewOptContactSearchRequest(api.ContactSearchRequest{SegmentIds: many}), api.ContactsSearchParams{})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_segment_ids")

	// POST /contacts takes at most 1000 contacts a call.
	batch := make([]api.ContactCreate, 1001)
	for i := range batch {
		batch[i] = api.ContactCreate{Email: fmt.Sprintf("p%d@batch.example", i)}
	}
	_, err = f.c.ContactsCreate(ctx, batch, api.ContactsCreateParams{})
	requireAPIError(t, err, http.StatusBadRequest, "too_many_items")
	require.Zero(t, orgInt(t, f.env, f.org, `SELECT count(*) FROM contacts WHERE organization_id = $1 AND email LIKE '%@batch.example'`, f.org))
}
