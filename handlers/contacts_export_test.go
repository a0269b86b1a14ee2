package handlers_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/xuri/excelize/v2"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/config"
)

// exportFile runs an export through the SDK and returns the raw response with its body read.
func exportFile(t testing.TB, c *api.Client, req api.ContactExportRequest) (*http.Response, []byte) {
	t.Helper()
	res, err := c.ContactsExport(context.Background(), &req)
	require.NoError(t, err)
	resp := res.(interface{ GetResponse() *http.Response }).GetResponse()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return resp, body
}

// exportCSV runs a CSV export and returns its records, header first.
func exportCSV(t testing.TB, c *api.Client, req api.ContactExportRequest) (*http.Response, [][]string) {
	t.Helper()
	req.Format = api.ContactExportRequestFormatCsv
	resp, body := exportFile(t, c, req)
	records, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	require.NoError(t, err)
	return resp, records
}

// exportColumnOf returns one column of a CSV export's rows (without the header).
func exportColumnOf(t testing.TB, records [][]string, name string) []string {
	t.Helper()
	i := slices.Index(records[0], name)
	require.GreaterOrEqual(t, i, 0, "no column %s in %v", name, records[0])
	out := make([]string, 0, len(records)-1)
	for _, r := range records[1:] {
		out = append(out, r[i])
	}
	return out
}

func exportAll(fields ...string) api.ContactExportRequest {
	return api.ContactExportRequest{Format: api.ContactExportRequestFormatCsv, Scope: api.ContactExportRequestScopeAll, Fields: fields}
}

func exportFiltered(filters api.ContactSearchRequest, fields ...string) api.ContactExportRequest {
	return api.ContactExportRequest{Format: api.ContactExportRequestFormatCsv, Scope: api.ContactExportRequestScopeFiltered,
		Filters: api.NewOptContactSearchRequest(filters), Fields: fields}
}

// byID orders contacts as an export does (id order, that is creation order).
func byID(cs []api.Contact) []api.Contact {
	out := slices.Clone(cs)
	slices.SortFunc(out, func(a, b api.Contact) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	return out
}

func TestContactExportFormats(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID

	vip := seedCategory(t, env, org, "VIP")
	partner := seedCategory(t, env, org, "Partner")
	orgExec(t, env, org, `UPDATE labels SET position = 1 WHERE organization_id = $1 AND id = $2`, org, partner) // after VIP
	spring := seedCampaign(t, env, org, "Spring launch")
	created := byID(createContacts(t, c,
		api.ContactCreate{Email: "ada@example.com", FirstName: api.NewOptString("Ada"), LastName: api.NewOptString("Lovelace"),
			Company: api.NewOptString(`=HYPERLINK("http://evil.example","x")`), Phone: api.NewOptString("+1 555 0100"),
			Categories: []uuid.UUID{vip, partner}, Campaigns: []uuid.UUID{spring},
			CustomFields: api.NewOptContactCreateCustomFields(api.ContactCreateCustomFields{"industry": "Math", "tier level": "-gold"})},
		api.ContactCreate{Email: "bob@example.com", FirstName: api.NewOptString("Bob"), Company: api.NewOptString("Acme, \"Inc\""),
			Subscribed: api.NewOptBool(false)},
	))
	require.Len(t, created, 2)
	ada, bob := created[0], created[1]
	if ada.Email != "ada@example.com" {
		ada, bob = bob, ada
	}

	fields := []string{"email", "company", "phone", "subscribed", "custom:industry", "custom:tier level", "categories",
		"campaigns", "campaign_count", "verification_confidence", "created_at", "id"}

	t.Run("csv", func(t *testing.T) {
		resp, records := exportCSV(t, c, api.ContactExportRequest{Scope: api.ContactExportRequestScopeAll, Fields: fields})
		require.Equal(t, "text/csv; charset=utf-8", resp.Header.Get("Content-Type"))
		require.Equal(t, "2", resp.Header.Get("X-Total-Rows"))
		require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
		require.Len(t, records, 3)
		require.Equal(t, fields, records[0], "the header row is the fields, in order")
		rows := map[string][]string{records[1][0]: records[1], records[2][0]: records[2]}
		require.Equal(t, created[0].Email, records[1][0], "rows come in id order")
		require.Equal(t, []string{"ada@example.com", `'=HYPERLINK("http://evil.example","x")`, "'+1 555 0100", "true", "Math",
			"'-gold", "VIP; Partner", "Spring launch", "1", "0", ada.CreatedAt.UTC().Format(time.RFC3339), ada.ID.String()},
			rows["ada@example.com"], "cells that start a formula are defused with a quote")
		require.Equal(t, []string{"bob@example.com", `Acme, "Inc"`, "", "false", "", "", "", "", "0", "0",
			bob.CreatedAt.UTC().Format(time.RFC3339), bob.ID.String()}, rows["bob@example.com"])
		at, err := time.Parse(time.RFC3339, rows["ada@example.com"][10])
		require.NoError(t, err)
		require.True(t, at.Equal(ada.CreatedAt))
	})

	t.Run("xlsx", func(t *testing.T) {
		resp, body := exportFile(t, c, api.ContactExportRequest{Format: api.ContactExportRequestFormatXlsx,
			Scope: api.ContactExportRequestScopeAll, Fields: fields})
		require.Equal(t, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", resp.Header.Get("Content-Type"))
		require.Equal(t, "2", resp.Header.Get("X-Total-Rows"))
		require.Regexp(t, `^attachment; filename="contacts-\d{4}-\d{2}-\d{2}\.xlsx"$`, resp.Header.Get("Content-Disposition"))
		f, err := excelize.OpenReader(bytes.NewReader(body))
		require.NoError(t, err)
		defer f.Close()
		require.Equal(t, []string{"Contacts"}, f.GetSheetList())
		rows, err := f.GetRows("Contacts")
		require.NoError(t, err)
		require.Len(t, rows, 3)
		require.Equal(t, fields, rows[0])
		adaRow := 2
		if rows[1][0] != "ada@example.com" {
			adaRow = 3
		}
		require.Equal(t, []string{"ada@example.com", `=HYPERLINK("http://evil.example","x")`, "+1 555 0100", "TRUE", "Math",
			"-gold", "VIP; Partner", "Spring launch", "1", "0", ada.CreatedAt.UTC().Format(time.RFC3339), ada.ID.String()},
			rows[adaRow-1], "XLSX cells are typed text: nothing to defuse")
		formula, err := f.GetCellFormula("Contacts", fmt.Sprintf("B%d", adaRow))
		require.NoError(t, err)
		require.Empty(t, formula, "a value starting with = is text, not a formula")
		typ, err := f.GetCellType("Contacts", fmt.Sprintf("I%d", adaRow))
		require.NoError(t, err)
		require.Equal(t, excelize.CellTypeUnset, typ, "campaign_count is a number (a cell without a type)")
		typ, err = f.GetCellType("Contacts", fmt.Sprintf("B%d", adaRow))
		require.NoError(t, err)
		require.Equal(t, excelize.CellTypeInlineString, typ, "text is a string cell")
		typ, err = f.GetCellType("Contacts", fmt.Sprintf("D%d", adaRow))
		require.NoError(t, err)
		require.Equal(t, excelize.CellTypeBool, typ, "subscribed is a boolean")
		bobRow := rows[5-adaRow-1]
		require.Equal(t, "bob@example.com", bobRow[0])
		require.Equal(t, "", bobRow[4], "a custom field the contact lacks is blank")
	})

	t.Run("json", func(t *testing.T) {
		resp, body := exportFile(t, c, api.ContactExportRequest{Format: api.ContactExportRequestFormatJSON,
			Scope: api.ContactExportRequestScopeAll, Fields: fields, Filename: api.NewOptString("Q3 export")})
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		require.Equal(t, `attachment; filename="Q3-export.json"`, resp.Header.Get("Content-Disposition"))
		require.Equal(t, "2", resp.Header.Get("X-Total-Rows"))
		var got []map[string]any
		require.NoError(t, json.Unmarshal(body, &got))
		require.Len(t, got, 2)
		byEmail := map[string]map[string]any{}
		for _, o := range got {
			byEmail[o["email"].(string)] = o
		}
		require.Equal(t, map[string]any{"email": "ada@example.com", "company": `=HYPERLINK("http://evil.example","x")`,
			"phone": "+1 555 0100", "subscribed": true, "custom:industry": "Math", "custom:tier level": "-gold",
			"categories": "VIP; Partner", "campaigns": "Spring launch", "campaign_count": float64(1),
			"verification_confidence": float64(0), "created_at": ada.CreatedAt.UTC().Format(time.RFC3339),
			"id": ada.ID.String()}, byEmail["ada@example.com"])
		require.Nil(t, byEmail["bob@example.com"]["custom:industry"], "blank is null")
		require.Contains(t, byEmail["bob@example.com"], "custom:industry")
		require.Equal(t, false, byEmail["bob@example.com"]["subscribed"])

		// Keys come in column order.
		var elems []json.RawMessage
		require.NoError(t, json.Unmarshal(body, &elems))
		dec := json.NewDecoder(bytes.NewReader(elems[0]))
		_, err := dec.Token()
		require.NoError(t, err)
		var keys []string
		for dec.More() {
			tok, err := dec.Token()
			require.NoError(t, err)
			keys = append(keys, tok.(string))
			var v json.RawMessage
			require.NoError(t, dec.Decode(&v))
		}
		require.Equal(t, fields, keys)
	})
}

func TestContactExportDefaultsAndFilename(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)

	// An empty list still exports its header row.
	resp, records := exportCSV(t, c, api.ContactExportRequest{Scope: api.ContactExportRequestScopeAll})
	require.Equal(t, "0", resp.Header.Get("X-Total-Rows"))
	require.Equal(t, [][]string{{"email", "first_name", "last_name", "company", "phone", "subscribed", "verification_status",
		"categories", "created_at"}}, records, "no fields: the default columns")

	vip := seedCategory(t, env, boot.OrganizationID, "VIP")
	ada := createContacts(t, c, api.ContactCreate{Email: "ada@example.com", FirstName: api.NewOptString("Ada"),
		Categories: []uuid.UUID{vip}, VerificationStatus: api.NewOptString("valid")})[0]
	_, records = exportCSV(t, c, api.ContactExportRequest{Scope: api.ContactExportRequestScopeAll})
	require.Equal(t, []string{"ada@example.com", "Ada", "", "", "", "true", "valid", "VIP", ada.CreatedAt.UTC().Format(time.RFC3339)}, records[1])

	for _, tc := range []struct{ in, want string }{
		{"Q3 leads", "Q3-leads.csv"},
		{"../../etc/passwd", "etcpasswd.csv"},
		{`C:\Users\"ada"\list`, "CUsersadalist.csv"},
		{"x\r\nSet-Cookie: y=1", "xSet-Cookie-y1.csv"},
		{"report.CSV", "report.csv"},
		{"archive.tar.csv", "archive.tar.csv"},
		{"Kontakte März_2026", "Kontakte-Mrz_2026.csv"},
		{strings.Repeat("a", 150), strings.Repeat("a", 100) + ".csv"},
		{"///", ""},
		{"..", ""},
		{"", ""},
	} {
		before := time.Now().UTC().Format(time.DateOnly)
		res, _ := exportFile(t, c, api.ContactExportRequest{Format: api.ContactExportRequestFormatCsv,
			Scope: api.ContactExportRequestScopeAll, Filename: api.NewOptString(tc.in)})
		after := time.Now().UTC().Format(time.DateOnly)
		got := res.Header.Get("Content-Disposition")
		if tc.want == "" {
			require.Contains(t, []string{`attachment; filename="contacts-` + before + `.csv"`, `attachment; filename="contacts-` + after + `.csv"`},
				got, "%q falls back to the default name", tc.in)
			continue
		}
		require.Equal(t, `attachment; filename="`+tc.want+`"`, got, "filename %q", tc.in)
	}
}

func TestContactExportScopes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	other := env.Bootstrap(t, "globex")
	oc := env.Client(t, other.APIKey)

	vip := seedCategory(t, env, boot.OrganizationID, "VIP")
	cs := byID(createContacts(t, c,
		api.ContactCreate{Email: "a@example.com", Categories: []uuid.UUID{vip}},
		api.ContactCreate{Email: "b@example.com", Categories: []uuid.UUID{vip}},
		api.ContactCreate{Email: "c@example.com"},
		api.ContactCreate{Email: "d@example.com"},
	))
	foreign := createContacts(t, oc, api.ContactCreate{Email: "e@example.com"})[0]
	emails := contactEmails(cs)

	// all: every contact of the caller's organization; filters are ignored.
	req := exportAll("email")
	req.Filters = api.NewOptContactSearchRequest(api.ContactSearchRequest{Query: api.NewOptString("nobody")})
	resp, records := exportCSV(t, c, req)
	require.Equal(t, "4", resp.Header.Get("X-Total-Rows"))
	require.Equal(t, emails, exportColumnOf(t, records, "email"))
	resp, records = exportCSV(t, oc, exportAll("email"))
	require.Equal(t, "1", resp.Header.Get("X-Total-Rows"))
	require.Equal(t, []string{"e@example.com"}, exportColumnOf(t, records, "email"), "another organization's export sees only its own")

	// filtered: the search body decides.
	resp, records = exportCSV(t, c, exportFiltered(api.ContactSearchRequest{CategoryIds: []string{vip.String()}}, "email"))
	require.Equal(t, "2", resp.Header.Get("X-Total-Rows"))
	require.Equal(t, emails[:2], exportColumnOf(t, records, "email"))
	resp, records = exportCSV(t, c, exportFiltered(api.ContactSearchRequest{Query: api.NewOptString("D@EXAMPLE")}, "email"))
	require.Equal(t, "1", resp.Header.Get("X-Total-Rows"))
	require.Equal(t, []string{"d@example.com"}, exportColumnOf(t, records, "email"))
	resp, records = exportCSV(t, c, api.ContactExportRequest{Scope: api.ContactExportRequestScopeFiltered, Fields: []string{"email"}})
	require.Equal(t, "4", resp.Header.Get("X-Total-Rows"), "filtered without filters matches everything, as an empty search does")
	require.Len(t, records, 5)
	resp, records = exportCSV(t, c, exportFiltered(api.ContactSearchRequest{Query: api.NewOptString("zzz")}, "email"))
	require.Equal(t, "0", resp.Header.Get("X-Total-Rows"))
	require.Equal(t, [][]string{{"email"}}, records)

	// selected: the ids that exist in the caller's organization, optionally narrowed by filters.
	sel := api.ContactExportRequest{Scope: api.ContactExportRequestScopeSelected, Fields: []string{"email"},
		ContactIds: []uuid.UUID{cs[2].ID, cs[0].ID, foreign.ID, uuid.New(), cs[0].ID}}
	resp, records = exportCSV(t, c, sel)
	require.Equal(t, "2", resp.Header.Get("X-Total-Rows"), "unknown and foreign ids are dropped, repeats counted once")
	require.Equal(t, []string{"a@example.com", "c@example.com"}, exportColumnOf(t, records, "email"))
	sel.Filters = api.NewOptContactSearchRequest(api.ContactSearchRequest{CategoryIds: []string{vip.String()}})
	resp, records = exportCSV(t, c, sel)
	require.Equal(t, "1", resp.Header.Get("X-Total-Rows"))
	require.Equal(t, []string{"a@example.com"}, exportColumnOf(t, records, "email"))
}

func TestContactExportLeadColumns(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	org := boot.OrganizationID

	spring := seedCampaign(t, env, org, "Spring")
	fall := seedCampaign(t, env, org, "Fall")
	cs := byID(createContacts(t, c,
		api.ContactCreate{Email: "a@example.com", Campaigns: []uuid.UUID{spring, fall}},
		api.ContactCreate{Email: "b@example.com", Campaigns: []uuid.UUID{spring}},
		api.ContactCreate{Email: "c@example.com", Campaigns: []uuid.UUID{fall}, Subscribed: api.NewOptBool(false)},
	))
	orgExec(t, env, org, `UPDATE campaign_leads SET state = 'active', sent = 2, opened = 3, clicked = 1, replied = 1
		WHERE organization_id = $1 AND campaign_id = $2 AND contact_id = $3`, org, spring, cs[0].ID)
	orgExec(t, env, org, `UPDATE campaign_leads SET state = 'active', sent = 1, opened = 1
		WHERE organization_id = $1 AND campaign_id = $2 AND contact_id = $3`, org, fall, cs[2].ID)
	fields := []string{"email", "lead_status", "lead_opened", "lead_clicked", "lead_replied"}

	// One campaign in the filters: the lead columns describe each contact in it.
	_, records := exportCSV(t, c, exportFiltered(api.ContactSearchRequest{CampaignIds: []string{spring.String()}}, fields...))
	require.Equal(t, [][]string{fields, {"a@example.com", "replied", "3", "1", "1"}, {"b@example.com", "pending", "0", "0", "0"}}, records)
	_, records = exportCSV(t, c, exportFiltered(api.ContactSearchRequest{CampaignIds: []string{fall.String()}}, fields...))
	require.Equal(t, [][]string{fields, {"a@example.com", "pending", "0", "0", "0"}, {"c@example.com", "unsubscribed", "1", "0", "0"}}, records)

	// Selected, narrowed to one campaign: the same.
	_, records = exportCSV(t, c, api.ContactExportRequest{Scope: api.ContactExportRequestScopeSelected, Fields: fields,
		ContactIds: []uuid.UUID{cs[0].ID, cs[1].ID, cs[2].ID},
		Filters:    api.NewOptContactSearchRequest(api.ContactSearchRequest{CampaignIds: []string{spring.String()}})})
	require.Equal(t, [][]string{fields, {"a@example.com", "replied", "3", "1", "1"}, {"b@example.com", "pending", "0", "0", "0"}}, records)

	// Two campaigns, or none, or scope all (filters ignored): blank.
	_, records = exportCSV(t, c, exportFiltered(api.ContactSearchRequest{CampaignIds: []string{spring.String(), fall.String()}}, fields...))
	require.Equal(t, [][]string{fields, {"a@example.com", "", "", "", ""}}, records)
	all := exportAll(fields...)
	all.Filters = api.NewOptContactSearchRequest(api.ContactSearchRequest{CampaignIds: []string{spring.String()}})
	_, records = exportCSV(t, c, all)
	require.Equal(t, [][]string{fields, {"a@example.com", "", "", "", ""}, {"b@example.com", "", "", "", ""}, {"c@example.com", "", "", "", ""}}, records)

	// JSON: blank is null, counts are numbers.
	req := exportFiltered(api.ContactSearchRequest{CampaignIds: []string{spring.String()}}, fields...)
	req.Format = api.ContactExportRequestFormatJSON
	_, body := exportFile(t, c, req)
	var got []map[string]any
	require.NoError(t, json.Unmarshal(body, &got))
	require.Equal(t, []map[string]any{
		{"email": "a@example.com", "lead_status": "replied", "lead_opened": float64(3), "lead_clicked": float64(1), "lead_replied": float64(1)},
		{"email": "b@example.com", "lead_status": "pending", "lead_opened": float64(0), "lead_clicked": float64(0), "lead_replied": float64(0)},
	}, got)
	req = exportAll(fields...)
	req.Format = api.ContactExportRequestFormatJSON
	_, body = exportFile(t, c, req)
	require.NoError(t, json.Unmarshal(body, &got))
	require.Len(t, got, 3)
	require.Equal(t, map[string]any{"email": "a@example.com", "lead_status": nil, "lead_opened": nil, "lead_clicked": nil, "lead_replied": nil}, got[0])
}

func TestContactExportRefusals(t *testing.T) {
	t.Parallel()
	// 50,001 ids are about 2 MB of JSON: more than the test server's default body cap, within production's 10 MiB.
	env := apitest.New(t, func(c *config.Config) { c.MaxBodyBytes = 4 << 20 })
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	ctx := context.Background()
	createContacts(t, c, api.ContactCreate{Email: "a@example.com"})

	refuse := func(req api.ContactExportRequest, status int, code string) {
		t.Helper()
		_, err := c.ContactsExport(ctx, &req)
		requireAPIError(t, err, status, code)
	}
	refuse(api.ContactExportRequest{Format: api.ContactExportRequestFormatCsv, Scope: api.ContactExportRequestScopeSelected},
		http.StatusBadRequest, "invalid_selection")
	refuse(exportAll("email", "shoe_size"), http.StatusBadRequest, "invalid_fields")
	refuse(exportAll("Email"), http.StatusBadRequest, "invalid_fields")
	refuse(exportAll("email", "email"), http.StatusBadRequest, "invalid_fields")
	refuse(exportAll("custom:"), http.StatusBadRequest, "invalid_fields")
	refuse(exportAll("custom:a/b"), http.StatusBadRequest, "invalid_fields")
	refuse(exportAll("custom:"+strings.Repeat("k", contacts.MaxCustomKeyLen+1)), http.StatusBadRequest, "invalid_fields")
	many := make([]string, 201)
	for i := range many {
		many[i] = "custom:k" + strconv.Itoa(i)
	}
	refuse(exportAll(many...), http.StatusBadRequest, "invalid_fields")
	// The search body's own refusals pass through, for filtered and for selected.
	refuse(exportFiltered(api.ContactSearchRequest{LeadStatus: api.NewOptString("replied")}), http.StatusBadRequest, "lead_filter_requires_campaign")
	refuse(exportFiltered(api.ContactSearchRequest{CategoryIds: []string{"nope"}}), http.StatusBadRequest, "invalid_category_ids")
	refuse(api.ContactExportRequest{Format: api.ContactExportRequestFormatCsv, Scope: api.ContactExportRequestScopeSelected,
		ContactIds: []uuid.UUID{uuid.New()}, Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{Engagement: api.NewOptString("opened")})},
		http.StatusBadRequest, "lead_filter_requires_campaign")

	// More ids than an export has rows: refused before anything is read.
	ids := make([]uuid.UUID, 50001)
	for i := range ids {
		ids[i] = uuid.New()
	}
	refuse(api.ContactExportRequest{Format: api.ContactExportRequestFormatCsv, Scope: api.ContactExportRequestScopeSelected, ContactIds: ids},
		http.StatusBadRequest, "export_too_large")
	_, records := exportCSV(t, c, api.ContactExportRequest{Scope: api.ContactExportRequestScopeSelected, ContactIds: ids[:50000], Fields: []string{"email"}})
	require.Equal(t, [][]string{{"email"}}, records, "50,000 ids are allowed")

	// What the SDK will not send: a missing or unknown format or scope, a body that is not JSON.
	for body, code := range map[string]string{`{"scope":"all"}`: "invalid_body", `{"format":"pdf","scope":"all"}`: "invalid_request",
		`{"format":"csv"}`: "invalid_body", `{"format":"csv","scope":"everyone"}`: "invalid_request", `not json`: "invalid_body"} {
		resp := env.Do(t, http.MethodPost, "/v1/contacts/export", boot.APIKey, strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
		var e api.Error
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
		require.Equal(t, code, e.Code, body)
		require.Empty(t, resp.Header.Get("Content-Disposition"), "a refusal carries none of the file's headers")
		require.Empty(t, resp.Header.Get("X-Total-Rows"))
	}
	// A refusal from the handler carries none of the file's headers either.
	resp := env.Do(t, http.MethodPost, "/v1/contacts/export", boot.APIKey, strings.NewReader(`{"format":"csv","scope":"all","fields":["x"]}`),
		http.Header{"Content-Type": {"application/json"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Content-Disposition"))
	require.Empty(t, resp.Header.Get("X-Total-Rows"))

	// Credentials: none is 401, a key without READ_CONTACTS is 403.
	_, err := env.Client(t, "").ContactsExport(ctx, &api.ContactExportRequest{Format: api.ContactExportRequestFormatCsv, Scope: api.ContactExportRequestScopeAll})
	requireAPIError(t, err, http.StatusUnauthorized, "missing_credential")
	writer := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.WriteContacts))
	_, err = writer.ContactsExport(ctx, &api.ContactExportRequest{Format: api.ContactExportRequestFormatCsv, Scope: api.ContactExportRequestScopeAll})
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")
	reader := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadContacts))
	_, records = exportCSV(t, reader, exportAll("email"))
	require.Equal(t, [][]string{{"email"}, {"a@example.com"}}, records)
}

// copyContacts inserts n contacts into org with COPY (as the schema owner; COPY does not run under row-level
// security), each with a UUIDv7 id and its created_at. Like an import, it leaves them out of the search
// indexes (search_ready false) and records their id range as pending, which searches read all the same. row
// may adjust each one (but not its id): it gets the index and the values in copyContactColumns order.
func copyContacts(t testing.TB, env *apitest.Env, org uuid.UUID, n int, row func(i int, vals []any)) {
	t.Helper()
	rows := make([][]any, n)
	for i := range rows {
		id, at, err := contacts.NewID()
		require.NoError(t, err)
		vals := []any{org, id, fmt.Sprintf("person%06d@example.com", i), "First" + strconv.Itoa(i), "Last", "Company " + strconv.Itoa(i%100),
			"", map[string]string{"industry": "Industry " + strconv.Itoa(i%7)}, true, at, at, false}
		if row != nil {
			row(i, vals)
		}
		rows[i] = vals
	}
	ctx := context.Background()
	_, err := env.DB.OwnerPool(t).CopyFrom(ctx, pgx.Identifier{"contacts"}, copyContactColumns, pgx.CopyFromRows(rows))
	require.NoError(t, err)
	if n > 0 {
		_, err = env.DB.OwnerPool(t).Exec(ctx, `INSERT INTO contact_index_pending (organization_id, lo, hi) VALUES ($1, $2, $3)`, org, rows[0][1], rows[n-1][1])
		require.NoError(t, err)
	}
}

var copyContactColumns = []string{"organization_id", "id", "email", "first_name", "last_name", "company", "phone", "custom_fields",
	"subscribed", "created_at", "updated_at", "search_ready"}

func TestContactExportRowCap(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	ctx := context.Background()
	// 50,001 contacts, the last one unsubscribed.
	copyContacts(t, env, boot.OrganizationID, 50001, func(i int, vals []any) { vals[8] = i < 50000 })

	_, err := c.ContactsExport(ctx, &api.ContactExportRequest{Format: api.ContactExportRequestFormatCsv, Scope: api.ContactExportRequestScopeAll})
	requireAPIError(t, err, http.StatusBadRequest, "export_too_large")
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Response.Message, "50001 rows")
	require.Contains(t, se.Response.Message, "scope filtered", "the refusal says how to narrow it")
	_, err = c.ContactsExport(ctx, &api.ContactExportRequest{Format: api.ContactExportRequestFormatJSON, Scope: api.ContactExportRequestScopeFiltered,
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{Query: api.NewOptString("example.com")})})
	requireAPIError(t, err, http.StatusBadRequest, "export_too_large")

	// Exactly 50,000 rows are allowed.
	resp, records := exportCSV(t, c, exportFiltered(api.ContactSearchRequest{Subscribed: api.NewOptBool(true)}, "email", "subscribed"))
	require.Equal(t, "50000", resp.Header.Get("X-Total-Rows"))
	require.Len(t, records, 50001)
	require.Equal(t, []string{"person000000@example.com", "true"}, records[1])
	require.Equal(t, []string{"person049999@example.com", "true"}, records[50000])
}

// failingResponse accepts the first write and fails every later one, as a connection that drops mid-download.
type failingResponse struct {
	header http.Header
	status int
	writes int
	body   bytes.Buffer
}

func (f *failingResponse) Header() http.Header { return f.header }
func (f *failingResponse) WriteHeader(status int) {
	if f.status == 0 {
		f.status = status
	}
}

func (f *failingResponse) Write(p []byte) (int, error) {
	f.writes++
	if f.writes > 1 {
		return 0, errors.New("connection reset by peer")
	}
	return f.body.Write(p)
}

func TestContactExportFailures(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	copyContacts(t, env, boot.OrganizationID, 1500, nil) // two batches
	h := handlers.NewContactExport(env.DB.Pool, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	ctx := auth.WithPrincipal(context.Background(), &auth.Principal{Kind: auth.KindAPIKey, CredentialID: uuid.New(),
		OrganizationID: boot.OrganizationID, Permissions: auth.ReadContacts})
	req := &api.ContactExportRequest{Format: api.ContactExportRequestFormatCsv, Scope: api.ContactExportRequestScopeAll}

	// Before the first byte a failure is still an error for the envelope, and nothing was written.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	w := &failingResponse{header: http.Header{}}
	require.Error(t, h.ContactsExport(canceled, req, w))
	require.Zero(t, w.status)
	require.Zero(t, w.writes)
	require.Empty(t, w.header)

	// After it the status is gone: the handler aborts the connection instead of ending a file that looks whole.
	w = &failingResponse{header: http.Header{}}
	require.PanicsWithValue(t, http.ErrAbortHandler, func() { _ = h.ContactsExport(ctx, req, w) })
	require.Equal(t, http.StatusOK, w.status)
	require.Equal(t, "1500", w.header.Get("X-Total-Rows"))
	require.True(t, strings.HasPrefix(w.body.String(), "email,first_name,"), "the first part went out")
}
