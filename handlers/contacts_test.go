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
	return createdOK(t, out)
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

func TestContactsBulkUpdateAndDelete(t *testing.T) {
	t.Parallel()
	f := newSearchFixture(t)
	ctx := context.Background()
	camp3 := seedCampaign(t, f.env, f.org, "Three")

	res, err := f.c.ContactsBulkUpdate(ctx, &api.ContactBulkUpdateRequest{
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
	updated := bulkUpdatedOK(t, res)
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
	res, err = f.c.ContactsBulkUpdate(ctx, &api.ContactBulkUpdateRequest{All: api.NewOptBool(true),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{CategoryIds: []string{f.cold.String()}}),
		Exclude: []uuid.UUID{f.bob.ID}, AddCategories: []uuid.UUID{f.hot}}, api.ContactsBulkUpdateParams{})
	require.NoError(t, err)
	require.Empty(t, bulkUpdatedOK(t, res))
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
	require.Empty(t, bulkUpdatedOK(t, res))
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

	res, err := c.ContactsUpdate(ctx, &api.ContactUpdate{FirstName: api.NewOptString(""), Company: api.NewOptString("Engines"),
		CustomFields: api.NewOptContactUpdateCustomFields(api.ContactUpdateCustomFields{"a": "", "c": "3"}),
		Campaigns:    []uuid.UUID{camp}, AddCategories: []uuid.UUID{cold}, RemoveCategories: []uuid.UUID{hot}}, api.ContactsUpdateParams{ID: ada.ID})
	require.NoError(t, err)
	up := contactUpdatedOK(t, res)
	require.Equal(t, "", up.FirstName, "PATCH clears")
	require.Equal(t, "Engines", up.Company)
	require.Equal(t, api.ContactCustomFields{"b": "2", "c": "3"}, up.CustomFields, "an empty value removes the key")
	require.Equal(t, []api.MiniCategory{{ID: cold, Title: "Cold", Color: "#123456"}}, up.Categories)
	require.Equal(t, []api.MiniCampaign{{ID: camp.String(), Name: "One"}}, up.Campaigns)
	res, err = c.ContactsUpdate(ctx, &api.ContactUpdate{Campaigns: []uuid.UUID{}}, api.ContactsUpdateParams{ID: ada.ID})
	require.NoError(t, err)
	require.Empty(t, contactUpdatedOK(t, res).Campaigns, "campaigns replace the whole set")

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
	res, err := f.c.ContactsBulkUpdate(ctx, &api.ContactBulkUpdateRequest{Contacts: thousand, Subscribe: api.NewOptBool(false)}, api.ContactsBulkUpdateParams{})
	require.NoError(t, err)
	require.Equal(t, []string{f.ada.Email}, contactEmails(bulkUpdatedOK(t, res)))

	// An empty id array deletes nothing and says so.
	status, code := rawCode(http.MethodDelete, "/v1/contacts", `[]`)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_request", code)
	require.Equal(t, int64(4), orgInt(t, f.env, f.org, `SELECT count(*) FROM contacts WHERE organization_id = $1`, f.org))

	// exclude without all is ignored: the listed contacts are all updated.
	res, err = f.c.ContactsBulkUpdate(ctx, &api.ContactBulkUpdateRequest{Contacts: []uuid.UUID{f.bob.ID, f.cy.ID}, Exclude: []uuid.UUID{f.bob.ID},
		AddCategories: []uuid.UUID{f.hot}}, api.ContactsBulkUpdateParams{})
	require.NoError(t, err)
	require.Equal(t, sortedEmails([]api.Contact{f.bob, f.cy}), sortedEmails(bulkUpdatedOK(t, res)))

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
