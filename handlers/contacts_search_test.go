package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
)

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
