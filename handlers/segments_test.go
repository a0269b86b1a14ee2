package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
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

func segCreate(t testing.TB, c *api.Client, req api.SegmentCreate) *api.Segment {
	t.Helper()
	s, err := c.SegmentsCreate(context.Background(), &req, api.SegmentsCreateParams{})
	require.NoError(t, err)
	return s
}

func segGet(t *testing.T, c *api.Client, id uuid.UUID) *api.Segment {
	t.Helper()
	s, err := c.SegmentsGet(context.Background(), api.SegmentsGetParams{ID: id})
	require.NoError(t, err)
	return s
}

func segAdd(t *testing.T, c *api.Client, id uuid.UUID, sel api.ContactSelection) *api.SegmentMembersChange {
	t.Helper()
	ans, err := c.SegmentsMembersAdd(context.Background(), &sel, api.SegmentsMembersAddParams{ID: id})
	require.NoError(t, err)
	res := membersAddedOK(t, ans)
	require.Equal(t, id, res.SegmentID)
	return res
}

func segRemove(t *testing.T, c *api.Client, id uuid.UUID, contacts ...uuid.UUID) *api.SegmentMembersChange {
	t.Helper()
	res, err := c.SegmentsMembersRemove(context.Background(), &api.SegmentMembersRemove{Contacts: contacts}, api.SegmentsMembersRemoveParams{ID: id})
	require.NoError(t, err)
	require.Equal(t, id, res.SegmentID)
	return res
}

func segUpdate(t *testing.T, c *api.Client, id uuid.UUID, req api.SegmentUpdate) *api.Segment {
	t.Helper()
	s, err := c.SegmentsUpdate(context.Background(), &req, api.SegmentsUpdateParams{ID: id})
	require.NoError(t, err)
	return s
}

// segChange is a membership change's counts as [added, removed, unchanged, member_count].
func segChange(r *api.SegmentMembersChange) [4]int {
	return [4]int{r.Added, r.Removed, r.Unchanged, r.MemberCount}
}

// segMembers reads every member page by page (limit 2) and returns their emails in the order listed.
func segMembers(t *testing.T, c *api.Client, id uuid.UUID) []string {
	t.Helper()
	var out []string
	params := api.SegmentsMembersListParams{ID: id, Limit: api.NewOptInt(2)}
	for range 20 {
		page, err := c.SegmentsMembersList(context.Background(), params)
		require.NoError(t, err)
		out = append(out, contactEmails(page.Data)...)
		if !page.Pagination.HasMore {
			require.True(t, page.Pagination.NextCursor.Null)
			return out
		}
		params.Cursor = api.NewOptString(page.Pagination.NextCursor.Value)
	}
	t.Fatal("paging did not end")
	return nil
}

// segPins returns a segment's pins as email -> include.
func segPins(t *testing.T, env *apitest.Env, org, id uuid.UUID) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT c.email, p.include FROM segment_pins p
			JOIN contacts c ON c.organization_id = p.organization_id AND c.id = p.contact_id
			WHERE p.organization_id = $1 AND p.segment_id = $2`, org, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var email string
			var include bool
			if err := rows.Scan(&email, &include); err != nil {
				return err
			}
			out[email] = include
		}
		return rows.Err()
	}))
	return out
}

func segSearch(t *testing.T, c *api.Client, ids ...uuid.UUID) []string {
	t.Helper()
	return sortedEmails(searchContacts(t, c, api.ContactSearchRequest{SegmentIds: ids}, api.ContactsSearchParams{}).Data)
}

func segContacts(t *testing.T, c *api.Client, emails ...string) []api.Contact {
	t.Helper()
	out := make([]api.Contact, len(emails))
	for i, e := range emails {
		out[i] = createContacts(t, c, api.ContactCreate{Email: e})[0]
	}
	return out
}

// segFilters is a segment's filters as the SDK reads them: the answer carries no sort (a segment keeps none)
// and the SDK fills in the contract's defaults for sort_by and reverse.
func segFilters(body api.ContactSearchRequest) api.OptContactSearchRequest {
	body.SortBy, body.Reverse = api.NewOptString("created_at"), api.NewOptBool(false)
	return api.NewOptContactSearchRequest(body)
}

func mathematicians() api.ContactSearchRequest {
	return api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "industry", Value: "mathematics", Type: "equal"}}}
}

func TestSegmentsStaticMembers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	cs := segContacts(t, c, "a@example.com", "b@example.com", "c@example.com", "d@example.com", "e@other.example")
	a, b, cc, d, e := cs[0], cs[1], cs[2], cs[3], cs[4]

	s := segCreate(t, c, api.SegmentCreate{Name: "  VIPs  ", Description: api.NewOptString(" Top accounts ")})
	require.Equal(t, "VIPs", s.Name)
	require.Equal(t, "Top accounts", s.Description.Value)
	require.Equal(t, api.SegmentKindStatic, s.Kind, "static is the default")
	require.False(t, s.Filters.Set)
	require.Equal(t, 0, s.MemberCount)
	require.Equal(t, org, s.OrganizationID.Value)

	// Repeats count once and ids of contacts that do not exist are dropped.
	require.Equal(t, [4]int{2, 0, 0, 2}, segChange(segAdd(t, c, s.ID, api.ContactSelection{Contacts: []uuid.UUID{a.ID, b.ID, a.ID, uuid.New()}})))
	require.Equal(t, [4]int{1, 0, 1, 3}, segChange(segAdd(t, c, s.ID, api.ContactSelection{Contacts: []uuid.UUID{b.ID, cc.ID}})))
	// A filter selection with an exclude list: a, b and c are members already, d is new, e is left out.
	require.Equal(t, [4]int{1, 0, 3, 4}, segChange(segAdd(t, c, s.ID, api.ContactSelection{All: api.NewOptBool(true),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{}), Exclude: []uuid.UUID{e.ID}})))
	require.Equal(t, map[string]bool{a.Email: true, b.Email: true, cc.Email: true, d.Email: true}, segPins(t, env, org, s.ID))

	// Members newest first, two per page; the total only on the first page.
	require.Equal(t, []string{d.Email, cc.Email, b.Email, a.Email}, segMembers(t, c, s.ID))
	first, err := c.SegmentsMembersList(ctx, api.SegmentsMembersListParams{ID: s.ID, Limit: api.NewOptInt(3)})
	require.NoError(t, err)
	require.Equal(t, int64(4), first.Pagination.Total.Value)
	require.True(t, first.Pagination.HasMore)
	require.Equal(t, []string{d.Email, cc.Email, b.Email}, contactEmails(first.Data))
	second, err := c.SegmentsMembersList(ctx, api.SegmentsMembersListParams{ID: s.ID, Limit: api.NewOptInt(3), Cursor: api.NewOptString(first.Pagination.NextCursor.Value)})
	require.NoError(t, err)
	require.False(t, second.Pagination.Total.Set, "total is on the first page only")
	require.False(t, second.Pagination.HasMore)
	require.Equal(t, []string{a.Email}, contactEmails(second.Data))
	_, err = c.SegmentsMembersList(ctx, api.SegmentsMembersListParams{ID: s.ID, Cursor: api.NewOptString("garbage")})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_cursor")

	// e was never a member and the random id is no contact: only a goes.
	require.Equal(t, [4]int{0, 1, 1, 3}, segChange(segRemove(t, c, s.ID, a.ID, e.ID, uuid.New())))
	require.Equal(t, [4]int{0, 0, 1, 3}, segChange(segRemove(t, c, s.ID, a.ID)))
	require.Equal(t, 3, segGet(t, c, s.ID).MemberCount)

	// Updates change only what is sent; an empty update changes nothing.
	updatedAt := func() int64 {
		return orgInt(t, env, org, `SELECT (extract(epoch FROM updated_at) * 1000000)::bigint FROM segments WHERE organization_id = $1 AND id = $2`, org, s.ID)
	}
	created := updatedAt()
	u := segUpdate(t, c, s.ID, api.SegmentUpdate{Name: api.NewOptString(" Key accounts ")})
	require.Equal(t, "Key accounts", u.Name)
	require.Equal(t, "Top accounts", u.Description.Value)
	require.Equal(t, 3, u.MemberCount)
	renamed := updatedAt()
	require.NotEqual(t, created, renamed)
	u = segUpdate(t, c, s.ID, api.SegmentUpdate{Description: api.NewOptString(""), Name: api.NewOptString("Key accounts")})
	require.Equal(t, "Key accounts", u.Name)
	require.Equal(t, "", u.Description.Value)
	described := updatedAt()
	require.NotEqual(t, renamed, described)
	same := segUpdate(t, c, s.ID, api.SegmentUpdate{})
	require.Equal(t, *u, *same)
	same = segUpdate(t, c, s.ID, api.SegmentUpdate{Name: api.NewOptString("Key accounts")})
	require.Equal(t, *u, *same)
	require.Equal(t, described, updatedAt(), "updates that change nothing write nothing")

	require.NoError(t, c.SegmentsDelete(ctx, api.SegmentsDeleteParams{ID: s.ID}))
	_, err = c.SegmentsGet(ctx, api.SegmentsGetParams{ID: s.ID})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")
	err = c.SegmentsDelete(ctx, api.SegmentsDeleteParams{ID: s.ID})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")
	require.Empty(t, segPins(t, env, org, s.ID), "pins go with the segment")
	require.Len(t, searchContacts(t, c, api.ContactSearchRequest{}, api.ContactsSearchParams{}).Data, 5, "contacts stay")

	actions := map[string]int64{}
	for _, action := range []string{"segment.created", "segment.members_added", "segment.members_removed", "segment.updated", "segment.deleted"} {
		actions[action] = orgInt(t, env, org, `SELECT count(*) FROM audit_log WHERE organization_id = $1 AND target_id = $2 AND event = $3`, org, s.ID.String(), action)
	}
	require.Equal(t, map[string]int64{"segment.created": 1, "segment.members_added": 3, "segment.members_removed": 2,
		"segment.updated": 2, "segment.deleted": 1}, actions)
}

func TestSegmentsDynamicMembers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	mk := func(email, company, industry string) api.Contact {
		in := api.ContactCreate{Email: email, Company: api.NewOptString(company)}
		if industry != "" {
			in.CustomFields = api.NewOptContactCreateCustomFields(api.ContactCreateCustomFields{"industry": industry})
		}
		return createContacts(t, c, in)[0]
	}
	ada := mk("ada@engines.example", "Analytical Engines", "Mathematics")
	bob := mk("bob@builders.example", "Builders", "Construction")
	cy := mk("cy@cyborg.example", "Cyborg", "")
	dora := mk("dora@maps.example", "Maps", "mathematics")

	body := mathematicians()
	body.SortBy, body.Reverse = api.NewOptString("email"), api.NewOptBool(true)
	s := segCreate(t, c, api.SegmentCreate{Name: "Mathematicians", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindDynamic),
		Filters: api.NewOptContactSearchRequest(body)})
	require.Equal(t, api.SegmentKindDynamic, s.Kind)
	require.Equal(t, 2, s.MemberCount)
	require.Equal(t, segFilters(mathematicians()), s.Filters, "stored without its sort")
	require.Equal(t, int64(0), orgInt(t, env, org, `SELECT count(*) FROM segments WHERE organization_id = $1 AND id = $2 AND filters ? 'sort_by'`, org, s.ID))
	raw := env.Do(t, http.MethodGet, "/v1/segments/"+s.ID.String(), boot.APIKey, nil, nil)
	rawBody, err := io.ReadAll(raw.Body)
	require.NoError(t, err)
	require.NoError(t, raw.Body.Close())
	require.Equal(t, http.StatusOK, raw.StatusCode)
	require.Contains(t, string(rawBody), `"custom_field_filters"`)
	require.NotContains(t, string(rawBody), `sort_by`)
	require.Equal(t, s.Filters, segGet(t, c, s.ID).Filters)
	require.Equal(t, []string{dora.Email, ada.Email}, segMembers(t, c, s.ID))

	// Membership follows the contacts' fields.
	setIndustry := func(ct api.Contact, v string) {
		_, err := c.ContactsUpdate(ctx, &api.ContactUpdate{CustomFields: api.NewOptContactUpdateCustomFields(api.ContactUpdateCustomFields{"industry": v})},
			api.ContactsUpdateParams{ID: ct.ID})
		require.NoError(t, err)
	}
	setIndustry(bob, "MATHEMATICS")
	require.Equal(t, 3, segGet(t, c, s.ID).MemberCount)
	setIndustry(bob, "Construction")
	require.Equal(t, 2, segGet(t, c, s.ID).MemberCount)

	// Adding: ada matches already (no pin written), cy gets an include pin.
	require.Equal(t, [4]int{1, 0, 1, 3}, segChange(segAdd(t, c, s.ID, api.ContactSelection{Contacts: []uuid.UUID{ada.ID, cy.ID}})))
	require.Equal(t, map[string]bool{cy.Email: true}, segPins(t, env, org, s.ID))

	// Removing: ada still matches so an exclude pin keeps her out; cy's include pin goes; bob was never in.
	require.Equal(t, [4]int{0, 2, 1, 1}, segChange(segRemove(t, c, s.ID, ada.ID, cy.ID, bob.ID)))
	require.Equal(t, map[string]bool{ada.Email: false}, segPins(t, env, org, s.ID))
	require.Equal(t, []string{dora.Email}, segMembers(t, c, s.ID))
	setIndustry(ada, "mathematics")
	require.Equal(t, []string{dora.Email}, segMembers(t, c, s.ID), "the exclude pin holds while she matches")
	require.Equal(t, [4]int{0, 0, 1, 1}, segChange(segRemove(t, c, s.ID, ada.ID)))

	// Adding an excluded contact turns the exclude pin into an include pin.
	require.Equal(t, [4]int{1, 0, 0, 2}, segChange(segAdd(t, c, s.ID, api.ContactSelection{Contacts: []uuid.UUID{ada.ID}})))
	require.Equal(t, map[string]bool{ada.Email: true}, segPins(t, env, org, s.ID))
	// A pinned contact stays a member when it stops matching; removing it then leaves no exclude pin behind.
	setIndustry(ada, "Poetry")
	require.Equal(t, []string{dora.Email, ada.Email}, segMembers(t, c, s.ID))
	require.Equal(t, [4]int{0, 1, 0, 1}, segChange(segRemove(t, c, s.ID, ada.ID)))
	require.Empty(t, segPins(t, env, org, s.ID))

	// A filter selection: every contact but bob; dora matches, the others get include pins.
	require.Equal(t, [4]int{2, 0, 1, 3}, segChange(segAdd(t, c, s.ID, api.ContactSelection{All: api.NewOptBool(true),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{}), Exclude: []uuid.UUID{bob.ID}})))
	require.Equal(t, map[string]bool{ada.Email: true, cy.Email: true}, segPins(t, env, org, s.ID))
	// dora gets an exclude pin, ada loses her include pin.
	require.Equal(t, [4]int{0, 2, 0, 1}, segChange(segRemove(t, c, s.ID, ada.ID, dora.ID)))
	require.Equal(t, map[string]bool{cy.Email: true, dora.Email: false}, segPins(t, env, org, s.ID))

	// Dynamic to static: the filters and the exclude pins go, the include pins stay.
	st := segUpdate(t, c, s.ID, api.SegmentUpdate{Kind: api.NewOptSegmentUpdateKind(api.SegmentUpdateKindStatic)})
	require.Equal(t, api.SegmentKindStatic, st.Kind)
	require.False(t, st.Filters.Set)
	require.Equal(t, 1, st.MemberCount)
	require.Equal(t, map[string]bool{cy.Email: true}, segPins(t, env, org, s.ID))
	require.Equal(t, []string{cy.Email}, segMembers(t, c, s.ID))

	// Back to dynamic needs filters; dora matches again (her exclude pin is gone).
	_, err = c.SegmentsUpdate(ctx, &api.SegmentUpdate{Kind: api.NewOptSegmentUpdateKind(api.SegmentUpdateKindDynamic)}, api.SegmentsUpdateParams{ID: s.ID})
	requireAPIError(t, err, http.StatusBadRequest, "filters_required")
	dyn := segUpdate(t, c, s.ID, api.SegmentUpdate{Kind: api.NewOptSegmentUpdateKind(api.SegmentUpdateKindDynamic), Filters: api.NewOptContactSearchRequest(mathematicians())})
	require.Equal(t, api.SegmentKindDynamic, dyn.Kind)
	require.Equal(t, []string{dora.Email, cy.Email}, segMembers(t, c, s.ID))
	// Sending filters alone replaces the whole body.
	byQuery := api.ContactSearchRequest{Query: api.NewOptString("builders")}
	dyn = segUpdate(t, c, s.ID, api.SegmentUpdate{Filters: api.NewOptContactSearchRequest(byQuery)})
	require.Equal(t, segFilters(byQuery), dyn.Filters)
	require.Equal(t, []string{cy.Email, bob.Email}, segMembers(t, c, s.ID))
	require.Equal(t, 2, dyn.MemberCount)
}

func TestSegmentsFiltersRoundTrip(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	camp := seedCampaign(t, env, boot.OrganizationID, "Launch")
	cat := seedCategory(t, env, boot.OrganizationID, "Hot")
	at := time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC)
	body := api.ContactSearchRequest{
		Query:              api.NewOptString("ada"),
		CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "tier", Value: "gold", Type: "starts_with"}},
		CampaignIds:        []string{camp.String()},
		LeadStatus:         api.NewOptString("replied"),
		Engagement:         api.NewOptString("opened"),
		CategoryIds:        []string{cat.String()},
		VerificationStatus: api.NewOptContactSearchRequestVerificationStatus(api.ContactSearchRequestVerificationStatusValid),
		MinCampaigns:       api.NewOptInt(1),
		MaxCampaigns:       api.NewOptInt(3),
		Subscribed:         api.NewOptBool(false),
		CreatedAfter:       api.NewOptDateTime(at),
		CreatedBefore:      api.NewOptDateTime(at.Add(time.Hour)),
		UpdatedAfter:       api.NewOptDateTime(at.Add(2 * time.Hour)),
		UpdatedBefore:      api.NewOptDateTime(at.Add(3 * time.Hour)),
	}
	s := segCreate(t, c, api.SegmentCreate{Name: "Everything", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindDynamic),
		Filters: api.NewOptContactSearchRequest(body)})
	require.Equal(t, segFilters(body), s.Filters)
	require.Equal(t, 0, s.MemberCount)
}

func TestSegmentsValidation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID
	camp := seedCampaign(t, env, org, "Launch")
	dynamic := api.NewOptSegmentCreateKind(api.SegmentCreateKindDynamic)
	filters := func(f api.ContactSearchRequest) api.OptContactSearchRequest { return api.NewOptContactSearchRequest(f) }
	for _, tc := range []struct {
		name string
		req  api.SegmentCreate
		code string
	}{
		{"blank name", api.SegmentCreate{Name: "   "}, "invalid_name"},
		{"two-line name", api.SegmentCreate{Name: "a\nb"}, "invalid_name"},
		{"dynamic without filters", api.SegmentCreate{Name: "x", Kind: dynamic}, "filters_required"},
		{"static by default with filters", api.SegmentCreate{Name: "x", Filters: filters(api.ContactSearchRequest{})}, "filters_not_allowed"},
		{"static with filters", api.SegmentCreate{Name: "x", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindStatic),
			Filters: filters(api.ContactSearchRequest{Query: api.NewOptString("a")})}, "filters_not_allowed"},
		{"nested segments", api.SegmentCreate{Name: "x", Kind: dynamic, Filters: filters(api.ContactSearchRequest{SegmentIds: []uuid.UUID{uuid.New()}})}, "invalid_filters"},
		{"lead status without campaign", api.SegmentCreate{Name: "x", Kind: dynamic, Filters: filters(api.ContactSearchRequest{LeadStatus: api.NewOptString("replied")})}, "lead_filter_requires_campaign"},
		{"unknown lead status", api.SegmentCreate{Name: "x", Kind: dynamic, Filters: filters(api.ContactSearchRequest{CampaignIds: []string{camp.String()},
			LeadStatus: api.NewOptString("bogus")})}, "invalid_lead_status"},
		{"unknown engagement", api.SegmentCreate{Name: "x", Kind: dynamic, Filters: filters(api.ContactSearchRequest{CampaignIds: []string{camp.String()},
			Engagement: api.NewOptString("bogus")})}, "invalid_engagement"},
		{"malformed campaign id", api.SegmentCreate{Name: "x", Kind: dynamic, Filters: filters(api.ContactSearchRequest{CampaignIds: []string{"nope"}})}, "invalid_campaign_ids"},
		{"bad custom field name", api.SegmentCreate{Name: "x", Kind: dynamic, Filters: filters(api.ContactSearchRequest{
			CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "a.b", Value: "v", Type: "equal"}}})}, "invalid_custom_field"},
	} {
		_, err := c.SegmentsCreate(ctx, &tc.req, api.SegmentsCreateParams{})
		requireAPIError(t, err, http.StatusBadRequest, tc.code)
	}
	// Limits the contract states are enforced before the handler runs.
	path := "/v1/segments"
	require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, http.MethodPost, path, boot.APIKey, fmt.Sprintf(`{"name": %q}`, strings.Repeat("n", 256))))
	require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, http.MethodPost, path, boot.APIKey, fmt.Sprintf(`{"name": "x", "description": %q}`, strings.Repeat("d", 1001))))
	require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, http.MethodPost, path, boot.APIKey, `{"name": "x", "kind": "smart"}`))
	require.Equal(t, int64(0), orgInt(t, env, org, `SELECT count(*) FROM segments WHERE organization_id = $1`, org), "nothing written")

	// 255 characters (runes) and 1000 of description fit.
	s := segCreate(t, c, api.SegmentCreate{Name: strings.Repeat("é", 255), Description: api.NewOptString(strings.Repeat("d", 1000))})
	require.Equal(t, strings.Repeat("é", 255), s.Name)
	for _, tc := range []struct {
		name string
		req  api.SegmentUpdate
		code string
	}{
		{"blank name", api.SegmentUpdate{Name: api.NewOptString(" ")}, "invalid_name"},
		{"filters on a static segment", api.SegmentUpdate{Filters: filters(api.ContactSearchRequest{})}, "filters_not_allowed"},
		{"filters with kind static", api.SegmentUpdate{Kind: api.NewOptSegmentUpdateKind(api.SegmentUpdateKindStatic), Filters: filters(api.ContactSearchRequest{})}, "filters_not_allowed"},
		{"dynamic without filters", api.SegmentUpdate{Kind: api.NewOptSegmentUpdateKind(api.SegmentUpdateKindDynamic)}, "filters_required"},
		{"nested segments", api.SegmentUpdate{Kind: api.NewOptSegmentUpdateKind(api.SegmentUpdateKindDynamic),
			Filters: filters(api.ContactSearchRequest{SegmentIds: []uuid.UUID{s.ID}})}, "invalid_filters"},
		{"invalid lead status", api.SegmentUpdate{Kind: api.NewOptSegmentUpdateKind(api.SegmentUpdateKindDynamic),
			Filters: filters(api.ContactSearchRequest{LeadStatus: api.NewOptString("replied")})}, "lead_filter_requires_campaign"},
	} {
		_, err := c.SegmentsUpdate(ctx, &tc.req, api.SegmentsUpdateParams{ID: s.ID})
		requireAPIError(t, err, http.StatusBadRequest, tc.code)
	}
	require.Equal(t, *s, *segGet(t, c, s.ID), "failed updates change nothing")
	_, err := c.SegmentsUpdate(ctx, &api.SegmentUpdate{Name: api.NewOptString("x")}, api.SegmentsUpdateParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")

	// Member selections.
	_, err = c.SegmentsMembersAdd(ctx, &api.ContactSelection{}, api.SegmentsMembersAddParams{ID: s.ID})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_selection")
	_, err = c.SegmentsMembersAdd(ctx, &api.ContactSelection{All: api.NewOptBool(true), Filters: filters(api.ContactSearchRequest{Query: api.NewOptString("nobody")})}, api.SegmentsMembersAddParams{ID: s.ID})
	requireAPIError(t, err, http.StatusBadRequest, "empty_selection")
	_, err = c.SegmentsMembersAdd(ctx, &api.ContactSelection{All: api.NewOptBool(true), Filters: filters(api.ContactSearchRequest{LeadStatus: api.NewOptString("replied")})}, api.SegmentsMembersAddParams{ID: s.ID})
	requireAPIError(t, err, http.StatusBadRequest, "lead_filter_requires_campaign")
	_, err = c.SegmentsMembersAdd(ctx, &api.ContactSelection{Contacts: []uuid.UUID{uuid.New()}}, api.SegmentsMembersAddParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")
	members := path + "/" + s.ID.String() + "/members"
	require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, http.MethodDelete, members, boot.APIKey, `{"contacts": []}`))
	ids := make([]string, 1001)
	for i := range ids {
		ids[i] = `"` + uuid.NewString() + `"`
	}
	require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, http.MethodDelete, members, boot.APIKey, `{"contacts": [`+strings.Join(ids, ",")+`]}`))
	require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, http.MethodDelete, members, boot.APIKey, `{"contacts": ["nope"]}`))
	_, err = c.SegmentsMembersRemove(ctx, &api.SegmentMembersRemove{Contacts: []uuid.UUID{uuid.New()}}, api.SegmentsMembersRemoveParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")
	_, err = c.SegmentsMembersList(ctx, api.SegmentsMembersListParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")
	require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, http.MethodGet, members+"?limit=101", boot.APIKey, ""))

	// At most 500 segments per organization.
	orgExec(t, env, org, `INSERT INTO segments (organization_id, id, name, kind) SELECT $1, gen_random_uuid(), 'seeded ' || g, 'static' FROM generate_series(1, 498) g`, org)
	segCreate(t, c, api.SegmentCreate{Name: "five hundredth"})
	_, err = c.SegmentsCreate(ctx, &api.SegmentCreate{Name: "one too many"}, api.SegmentsCreateParams{})
	requireAPIError(t, err, http.StatusBadRequest, "too_many_segments")
	require.NoError(t, c.SegmentsDelete(ctx, api.SegmentsDeleteParams{ID: s.ID}))
	segCreate(t, c, api.SegmentCreate{Name: "room again"})
}

func TestSegmentsList(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	cs := segContacts(t, c, "a@math.example", "b@math.example", "c@other.example")
	alpha := segCreate(t, c, api.SegmentCreate{Name: "Alpha"})
	segAdd(t, c, alpha.ID, api.ContactSelection{Contacts: []uuid.UUID{cs[2].ID}})
	beta := segCreate(t, c, api.SegmentCreate{Name: "beta_1", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindDynamic),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{Query: api.NewOptString("@math.")})})
	segCreate(t, c, api.SegmentCreate{Name: "Gamma"})

	list := func(p api.SegmentsListParams) *api.SegmentList {
		t.Helper()
		out, err := c.SegmentsList(ctx, p)
		require.NoError(t, err)
		return out
	}
	names := func(l *api.SegmentList) []string {
		out := make([]string, len(l.Data))
		for i, s := range l.Data {
			out[i] = s.Name
		}
		return out
	}
	all := list(api.SegmentsListParams{})
	require.Equal(t, []string{"Gamma", "beta_1", "Alpha"}, names(all), "newest first")
	require.Equal(t, []int{0, 2, 1}, []int{all.Data[0].MemberCount, all.Data[1].MemberCount, all.Data[2].MemberCount})
	require.Equal(t, segFilters(api.ContactSearchRequest{Query: api.NewOptString("@math.")}), all.Data[1].Filters)
	require.False(t, all.Pagination.HasMore)
	require.True(t, all.Pagination.NextCursor.Null)

	require.Equal(t, []string{"Alpha"}, names(list(api.SegmentsListParams{Q: api.NewOptString("ALP")})))
	require.Equal(t, []string{"beta_1"}, names(list(api.SegmentsListParams{Q: api.NewOptString("_")})), "LIKE wildcards are literal")
	require.Equal(t, []string{"Gamma"}, names(list(api.SegmentsListParams{Q: api.NewOptString("mA")})))

	page := list(api.SegmentsListParams{Limit: api.NewOptInt(2)})
	require.Equal(t, []string{"Gamma", "beta_1"}, names(page))
	require.True(t, page.Pagination.HasMore)
	next := list(api.SegmentsListParams{Limit: api.NewOptInt(2), Cursor: api.NewOptString(page.Pagination.NextCursor.Value)})
	require.Equal(t, []string{"Alpha"}, names(next))
	require.False(t, next.Pagination.HasMore)

	_, err := c.SegmentsList(ctx, api.SegmentsListParams{Cursor: api.NewOptString("garbage")})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_cursor")
	// A member-list cursor is not a segment-list cursor.
	members, err := c.SegmentsMembersList(ctx, api.SegmentsMembersListParams{ID: beta.ID, Limit: api.NewOptInt(1)})
	require.NoError(t, err)
	_, err = c.SegmentsList(ctx, api.SegmentsListParams{Cursor: api.NewOptString(members.Pagination.NextCursor.Value)})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_cursor")
	_, err = c.SegmentsList(ctx, api.SegmentsListParams{Q: api.NewOptString(strings.Repeat("q", 256))})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_query")
	require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, http.MethodGet, "/v1/segments?limit=0", boot.APIKey, ""))
	require.Equal(t, http.StatusBadRequest, orgRawStatus(t, env, http.MethodGet, "/v1/segments?limit=101", boot.APIKey, ""))
}

func TestSegmentsInContactSearch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	gold := api.NewOptContactCreateCustomFields(api.ContactCreateCustomFields{"tier": "gold"})
	a := createContacts(t, c, api.ContactCreate{Email: "a@example.com", CustomFields: gold})[0]
	b := createContacts(t, c, api.ContactCreate{Email: "b@example.com", CustomFields: gold})[0]
	cc := createContacts(t, c, api.ContactCreate{Email: "c@example.com", CustomFields: gold})[0]
	d := createContacts(t, c, api.ContactCreate{Email: "d@example.com"})[0]

	static := segCreate(t, c, api.SegmentCreate{Name: "Picked"})
	segAdd(t, c, static.ID, api.ContactSelection{Contacts: []uuid.UUID{a.ID, b.ID, d.ID}})
	dynamic := segCreate(t, c, api.SegmentCreate{Name: "Gold", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindDynamic),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "tier", Value: "gold", Type: "equal"}}})})

	require.Equal(t, []string{a.Email, b.Email, d.Email}, segSearch(t, c, static.ID))
	require.Equal(t, []string{a.Email, b.Email, cc.Email}, segSearch(t, c, dynamic.ID))
	require.Equal(t, []string{a.Email, b.Email}, segSearch(t, c, static.ID, dynamic.ID), "two segments intersect")
	require.Empty(t, segSearch(t, c, uuid.New()), "an unknown segment matches nothing")
	require.Empty(t, segSearch(t, c, static.ID, uuid.New()))
	first := searchContacts(t, c, api.ContactSearchRequest{SegmentIds: []uuid.UUID{dynamic.ID}}, api.ContactsSearchParams{})
	require.Equal(t, int64(3), first.Pagination.Total.Value)

	// Pins change what the search sees.
	segRemove(t, c, dynamic.ID, b.ID)
	segAdd(t, c, dynamic.ID, api.ContactSelection{Contacts: []uuid.UUID{d.ID}})
	require.Equal(t, []string{a.Email, cc.Email, d.Email}, segSearch(t, c, dynamic.ID))
	require.Equal(t, []string{a.Email, d.Email}, segSearch(t, c, static.ID, dynamic.ID))
	// A filter selection over a segment.
	other := segCreate(t, c, api.SegmentCreate{Name: "Copy"})
	require.Equal(t, [4]int{3, 0, 0, 3}, segChange(segAdd(t, c, other.ID, api.ContactSelection{All: api.NewOptBool(true),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{SegmentIds: []uuid.UUID{dynamic.ID}})})))
	require.Equal(t, []string{a.Email, cc.Email, d.Email}, segSearch(t, c, other.ID))
	// A deleted segment matches nothing.
	require.NoError(t, c.SegmentsDelete(context.Background(), api.SegmentsDeleteParams{ID: static.ID}))
	require.Empty(t, segSearch(t, c, static.ID))
}

func TestSegmentsOtherOrganization(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	bootA, bootB := env.Bootstrap(t, "acme"), env.Bootstrap(t, "globex")
	ca, cb := env.Client(t, bootA.APIKey), env.Client(t, bootB.APIKey)
	ax := createContacts(t, ca, api.ContactCreate{Email: "x@example.com"})[0]
	bx := createContacts(t, cb, api.ContactCreate{Email: "x@example.com"})[0]
	sa := segCreate(t, ca, api.SegmentCreate{Name: "Acme only"})
	segAdd(t, ca, sa.ID, api.ContactSelection{Contacts: []uuid.UUID{ax.ID}})

	_, err := cb.SegmentsGet(ctx, api.SegmentsGetParams{ID: sa.ID})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")
	_, err = cb.SegmentsUpdate(ctx, &api.SegmentUpdate{Name: api.NewOptString("mine")}, api.SegmentsUpdateParams{ID: sa.ID})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")
	_, err = cb.SegmentsMembersList(ctx, api.SegmentsMembersListParams{ID: sa.ID})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")
	_, err = cb.SegmentsMembersAdd(ctx, &api.ContactSelection{Contacts: []uuid.UUID{bx.ID}}, api.SegmentsMembersAddParams{ID: sa.ID})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")
	_, err = cb.SegmentsMembersRemove(ctx, &api.SegmentMembersRemove{Contacts: []uuid.UUID{ax.ID}}, api.SegmentsMembersRemoveParams{ID: sa.ID})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")
	err = cb.SegmentsDelete(ctx, api.SegmentsDeleteParams{ID: sa.ID})
	requireAPIError(t, err, http.StatusNotFound, "segment_not_found")
	list, err := cb.SegmentsList(ctx, api.SegmentsListParams{})
	require.NoError(t, err)
	require.Empty(t, list.Data)
	require.Empty(t, segSearch(t, cb, sa.ID), "another organization's segment matches nothing")

	// Another organization's contact ids are no contacts here.
	sb := segCreate(t, cb, api.SegmentCreate{Name: "Globex"})
	require.Equal(t, [4]int{1, 0, 0, 1}, segChange(segAdd(t, cb, sb.ID, api.ContactSelection{Contacts: []uuid.UUID{ax.ID, bx.ID}})))
	require.Equal(t, []string{bx.Email}, segMembers(t, cb, sb.ID))

	got := segGet(t, ca, sa.ID)
	require.Equal(t, "Acme only", got.Name)
	require.Equal(t, 1, got.MemberCount)
	require.Equal(t, []string{ax.Email}, segMembers(t, ca, sa.ID))
}
