package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	ht "github.com/ogen-go/ogen/http"
	"github.com/stretchr/testify/require"
	"github.com/xuri/excelize/v2"

	"github.com/outflowhq/outflow/cmd/outflow/app"
	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// impColumn is one mapping entry of the options part.
type impColumn struct {
	Index                int    `json:"index"`
	Target               string `json:"target"`
	CustomKey            string `json:"custom_key,omitempty"`
	VerificationProvider string `json:"verification_provider,omitempty"`
}

// impOpts is the options part of a commit, as a client writes it.
type impOpts struct {
	Mapping           []impColumn `json:"mapping"`
	Dedup             string      `json:"dedup"`
	HasHeader         bool        `json:"has_header"`
	CategoryIDs       []string    `json:"category_ids,omitempty"`
	CampaignIDs       []string    `json:"campaign_ids,omitempty"`
	SegmentIDs        []string    `json:"segment_ids,omitempty"`
	SubscribedDefault *bool       `json:"subscribed_default,omitempty"`
}

func (o impOpts) String() string {
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// cols maps columns in order: impCols("email", "first_name", "custom:Job Title") maps column 0 to email, ...
func impCols(targets ...string) []impColumn {
	out := make([]impColumn, len(targets))
	for i, t := range targets {
		out[i] = impColumn{Index: i, Target: t}
	}
	return out
}

func impFile(name string, data []byte) ht.MultipartFile {
	return ht.MultipartFile{Name: name, File: bytes.NewReader(data), Size: int64(len(data))}
}

func impCommit(c *api.Client, name, data string, opts string) (*api.ContactImportResult, error) {
	return c.ContactsImportCommit(context.Background(), &api.ContactsImportCommitReq{File: impFile(name, []byte(data)), Options: opts},
		api.ContactsImportCommitParams{})
}

// orgQuery runs fn in an organization-scoped transaction of the test database.
func impOrgQuery(t *testing.T, env *apitest.Env, org uuid.UUID, fn func(ctx context.Context, tx pgx.Tx) error) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, fn))
}

func impCount(t *testing.T, env *apitest.Env, org uuid.UUID, query string, args ...any) int {
	t.Helper()
	var n int
	impOrgQuery(t, env, org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, query, append([]any{org}, args...)...).Scan(&n)
	})
	return n
}

// seedContact writes a contact the way every writer must (id and created_at from contacts.NewID).
func impSeedContact(t *testing.T, env *apitest.Env, org uuid.UUID, email, first, company string, custom map[string]string, subscribed bool) uuid.UUID {
	t.Helper()
	id, at, err := contacts.NewID()
	require.NoError(t, err)
	if custom == nil {
		custom = map[string]string{}
	}
	fields, err := json.Marshal(custom)
	require.NoError(t, err)
	impOrgQuery(t, env, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO contacts (organization_id, id, email, first_name, company, custom_fields, subscribed, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`, org, id, email, first, company, fields, subscribed, at)
		return err
	})
	return id
}

func impSeedRow(t *testing.T, env *apitest.Env, org uuid.UUID, query string, args ...any) uuid.UUID {
	t.Helper()
	id := uuid.New()
	impOrgQuery(t, env, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, query, append([]any{org, id}, args...)...)
		return err
	})
	return id
}

// impContact is a contact row as the tests read it back.
type impContact struct {
	ID                                  uuid.UUID
	DuplicateSeq                        int64
	FirstName, LastName, Company, Phone string
	Custom                              map[string]string
	Subscribed                          bool
	Source                              string
	Status, SubStatus, VSource, VProv   string
	CheckedAt                           *time.Time
	SearchReady                         bool
	CreatedAt                           time.Time
}

func impContacts(t *testing.T, env *apitest.Env, org uuid.UUID, email string) []impContact {
	t.Helper()
	var out []impContact
	impOrgQuery(t, env, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, duplicate_seq, first_name, last_name, company, phone, custom_fields, subscribed, source,
			verification_status, verification_sub_status, verification_source, verification_provider, verification_checked_at,
			search_ready, created_at FROM contacts WHERE organization_id = $1 AND email = $2 ORDER BY duplicate_seq`, org, email)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c impContact
			if err := rows.Scan(&c.ID, &c.DuplicateSeq, &c.FirstName, &c.LastName, &c.Company, &c.Phone, &c.Custom, &c.Subscribed,
				&c.Source, &c.Status, &c.SubStatus, &c.VSource, &c.VProv, &c.CheckedAt, &c.SearchReady, &c.CreatedAt); err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	return out
}

func impOne(t *testing.T, env *apitest.Env, org uuid.UUID, email string) impContact {
	t.Helper()
	cs := impContacts(t, env, org, email)
	require.Len(t, cs, 1, email)
	return cs[0]
}

func impPreview(t *testing.T, c *api.Client, name string, data []byte) *api.ContactImportPreview {
	t.Helper()
	p, err := c.ContactsImportPreview(context.Background(), &api.ContactsImportPreviewReq{File: impFile(name, data)})
	require.NoError(t, err)
	return p
}

// impTargets reads a suggested mapping as "target" or "custom:key" per column.
func impTargets(m []api.ContactImportColumnMapping) []string {
	out := make([]string, len(m))
	for i, c := range m {
		out[i] = string(c.Target)
		if k, ok := c.CustomKey.Get(); ok {
			out[i] += ":" + k
		}
		if c.Index != i {
			out[i] += fmt.Sprintf("@%d", c.Index)
		}
	}
	return out
}

// impReasons lists a result's entries as "line email: reason".
func impReasons(res *api.ContactImportResult) []string {
	out := make([]string, len(res.Errors))
	for i, e := range res.Errors {
		out[i] = fmt.Sprintf("%d %s: %s", e.Line, e.Email.Value, e.Reason)
	}
	return out
}

func requireImportSums(t *testing.T, res *api.ContactImportResult) {
	t.Helper()
	require.Equal(t, res.Total, res.Imported+res.Updated+res.Skipped+res.Failed, "imported+updated+skipped+failed == total")
	require.False(t, res.EndedAt.Before(res.StartedAt))
}

func TestContactImportPreviewCSV(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)

	// A BOM, semicolons, another verifier's output column, a header with no key to derive.
	var b strings.Builder
	b.WriteString("\xEF\xBB\xBFE-mail;First Name;Surname;Organisation;Job Title;ZB Status;Subscribed;Tags;$$$\n")
	statuses := []string{"valid", "catch-all", "do_not_mail", "invalid"}
	for i := range 25 {
		fmt.Fprintf(&b, "user%d@example.com;First%d;Last%d;Acme;Engineer;%s;yes;\"vip, beta\";x\n", i, i, i, statuses[i%4])
	}
	b.WriteString(";;;;;;;;\n\n") // trailing blank rows are not rows
	p := impPreview(t, c, "leads.csv", []byte(b.String()))
	require.Equal(t, "leads.csv", p.Filename)
	require.Equal(t, "csv", p.Format)
	require.Equal(t, 25, p.TotalRows)
	require.True(t, p.HasHeader)
	require.Equal(t, []string{"E-mail", "First Name", "Surname", "Organisation", "Job Title", "ZB Status", "Subscribed", "Tags", "$$$"}, p.Columns)
	require.Len(t, p.SampleRows, 20)
	require.Equal(t, []string{"user0@example.com", "First0", "Last0", "Acme", "Engineer", "valid", "yes", "vip, beta", "x"}, p.SampleRows[0])
	require.Equal(t, []string{"email", "first_name", "last_name", "company", "custom:Job Title", "verification_status", "subscribed", "categories", "ignore"},
		impTargets(p.SuggestedMapping))

	// Tabs, no header: columns are numbered, the email column is found by its values, the rest is ignored.
	p = impPreview(t, c, "plain.tsv", []byte("Ada\tada@example.com\tx\nBob\tbob@example.com\n"))
	require.False(t, p.HasHeader)
	require.Equal(t, 2, p.TotalRows)
	require.Equal(t, []string{"Column 1", "Column 2", "Column 3"}, p.Columns)
	require.Equal(t, [][]string{{"Ada", "ada@example.com", "x"}, {"Bob", "bob@example.com", ""}}, p.SampleRows, "short rows are padded")
	require.Equal(t, []string{"ignore", "email", "ignore"}, impTargets(p.SuggestedMapping))

	// A header is told by its words when no row holds an address yet.
	p = impPreview(t, c, "h.csv", []byte("Email,Name\n"))
	require.True(t, p.HasHeader)
	require.Equal(t, 0, p.TotalRows)
	require.Empty(t, p.SampleRows)

	// Windows-1252, as spreadsheets save CSV in much of the world.
	p = impPreview(t, c, "latin.csv", []byte("email,first name\njose@example.com,Jos\xe9\n"))
	require.Equal(t, []string{"jose@example.com", "José"}, p.SampleRows[0])

	// UTF-16 "Unicode text" with its BOM, tab-separated.
	utf16 := []byte{0xFF, 0xFE}
	for _, r := range "email\tfirst name\r\nzoe@example.com\tZoë\r\n" {
		utf16 = append(utf16, byte(r), byte(r>>8))
	}
	p = impPreview(t, c, "unicode.txt", utf16)
	require.Equal(t, []string{"email", "first name"}, p.Columns)
	require.Equal(t, [][]string{{"zoe@example.com", "Zoë"}}, p.SampleRows)
	require.Equal(t, []string{"email", "first_name"}, impTargets(p.SuggestedMapping))
}

// xlsxFile builds a workbook whose first sheet holds rows from A1 down (nil rows are left empty).
func xlsxFile(t *testing.T, rows [][]any) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, r := range rows {
		if r == nil {
			continue
		}
		cell, err := excelize.CoordinatesToCellName(1, i+1)
		require.NoError(t, err)
		require.NoError(t, f.SetSheetRow("Sheet1", cell, &r))
	}
	buf, err := f.WriteToBuffer()
	require.NoError(t, err)
	return buf.Bytes()
}

func TestContactImportXLSX(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	data := xlsxFile(t, [][]any{
		{"Email Address", "Given Name", "Mobile", "Plan"},
		{"ada@example.com", "Ada", 4155550123, "pro"},
		{"bob@example.com", "Bob", "", "free"},
		nil, // an empty sheet row is not a row, but it keeps its number
		{"not an address", "Eve"},
	})
	p := impPreview(t, c, "book.xlsx", data)
	require.Equal(t, "xlsx", p.Format)
	require.Equal(t, 3, p.TotalRows)
	require.True(t, p.HasHeader)
	require.Equal(t, []string{"Email Address", "Given Name", "Mobile", "Plan"}, p.Columns)
	require.Equal(t, []string{"ada@example.com", "Ada", "4155550123", "pro"}, p.SampleRows[0])
	require.Equal(t, []string{"not an address", "Eve", "", ""}, p.SampleRows[2])
	require.Equal(t, []string{"email", "first_name", "phone", "custom:Plan"}, impTargets(p.SuggestedMapping))

	res, err := c.ContactsImportCommit(context.Background(), &api.ContactsImportCommitReq{File: impFile("book.xlsx", data),
		Options: impOpts{Mapping: impCols("email", "first_name", "phone", "custom:Plan"), Dedup: "skip", HasHeader: true}.String()},
		api.ContactsImportCommitParams{})
	require.NoError(t, err)
	requireImportSums(t, res)
	require.Equal(t, 2, res.Imported)
	require.Equal(t, 1, res.Failed)
	require.Equal(t, []string{"5 not an address: not a valid email address"}, impReasons(res), "lines are sheet rows")
	require.Equal(t, []string{"not an address", "Eve"}, res.Errors[0].Values)
	ada := impOne(t, env, boot.OrganizationID, "ada@example.com")
	require.Equal(t, "4155550123", ada.Phone)
	require.Equal(t, map[string]string{"Plan": "pro"}, ada.Custom)
}

func TestContactImportFileErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	ctx := context.Background()
	opts := impOpts{Mapping: impCols("email"), Dedup: "skip", HasHeader: false}.String()
	for _, tc := range []struct{ name, data, code string }{
		{"empty", "", "empty_file"},
		{"blank rows only", ",,,\n\n , ,\n", "empty_file"},
		{"legacy workbook", "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1rest of an xls", "unsupported_format"},
		{"broken zip", "PK\x03\x04 not really a workbook", "unreadable_file"},
		{"binary", "email\x00\x01\x02", "unreadable_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.ContactsImportPreview(ctx, &api.ContactsImportPreviewReq{File: impFile(tc.name, []byte(tc.data))})
			requireAPIError(t, err, http.StatusBadRequest, tc.code)
			_, err = impCommit(c, tc.name, tc.data, opts)
			requireAPIError(t, err, http.StatusBadRequest, tc.code)
		})
	}
	// A header and nothing else has no rows to import.
	_, err := impCommit(c, "h.csv", "email\n", impOpts{Mapping: impCols("email"), Dedup: "skip", HasHeader: true}.String())
	requireAPIError(t, err, http.StatusBadRequest, "empty_file")

}

// TestContactImportFileTooLarge checks both caps: the import routes take bodies up to app.ImportBodyBytes
// (beyond, the server answers 413 before the handler), and the handler refuses files over 50 MB.
func TestContactImportFileTooLarge(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	data := bytes.Repeat([]byte("a"), app.ImportBodyBytes+1)
	_, err := c.ContactsImportPreview(context.Background(), &api.ContactsImportPreviewReq{File: impFile("huge.csv", data)})
	requireAPIError(t, err, http.StatusRequestEntityTooLarge, "request_too_large")
	_, err = impCommit(c, "huge.csv", string(data[:50<<20+1]), impOpts{Mapping: impCols("email"), Dedup: "skip"}.String())
	requireAPIError(t, err, http.StatusBadRequest, "file_too_large")
	_, err = c.ContactsImportPreview(context.Background(), &api.ContactsImportPreviewReq{File: impFile("huge.csv", data[:50<<20+1])})
	requireAPIError(t, err, http.StatusBadRequest, "file_too_large")
}

func TestContactImportPermissions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	file, opts := "a@example.com\n", impOpts{Mapping: impCols("email"), Dedup: "skip"}.String()
	read := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadContacts|auth.WriteContacts))
	_, err := read.ContactsImportPreview(context.Background(), &api.ContactsImportPreviewReq{File: impFile("a.csv", []byte(file))})
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")
	_, err = impCommit(read, "a.csv", file, opts)
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")

	bulk := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.BulkContacts))
	res, err := impCommit(bulk, "a.csv", file, opts)
	require.NoError(t, err)
	require.Equal(t, 1, res.Imported)
}

// TestContactImportRefusals walks every 400 of a commit and checks that none of them wrote anything.
func TestContactImportRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	other := env.Bootstrap(t, "other")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	category := impSeedRow(t, env, org, `INSERT INTO labels (organization_id, id, kind, title) VALUES ($1, $2, 'category', 'VIP')`)
	folder := impSeedRow(t, env, org, `INSERT INTO labels (organization_id, id, kind, title) VALUES ($1, $2, 'folder', 'Q3')`)
	foreign := impSeedRow(t, env, other.OrganizationID, `INSERT INTO labels (organization_id, id, kind, title) VALUES ($1, $2, 'category', 'Theirs')`)
	campaign := impSeedRow(t, env, org, `INSERT INTO campaigns (organization_id, id, name) VALUES ($1, $2, 'Launch')`)
	segment := impSeedRow(t, env, org, `INSERT INTO segments (organization_id, id, name, kind) VALUES ($1, $2, 'Static', 'static')`)
	_ = campaign

	file := "email,first,status\nada@example.com,Ada,valid\nbob@example.com,Bob,ok\n"
	valid := func(edit func(o *impOpts)) string {
		o := impOpts{Mapping: impCols("email", "first_name"), Dedup: "skip", HasHeader: true,
			CategoryIDs: []string{category.String()}, SegmentIDs: []string{segment.String()}}
		edit(&o)
		return o.String()
	}
	manyIDs := make([]string, 51)
	for i := range manyIDs {
		manyIDs[i] = uuid.NewString()
	}
	manyCustom := impCols("email")
	for i := range 101 {
		manyCustom = append(manyCustom, impColumn{Index: i + 1, Target: "custom", CustomKey: fmt.Sprintf("f%d", i)})
	}
	for _, tc := range []struct {
		name, opts, code string
	}{
		{"not JSON", `{mapping`, "invalid_options"},
		{"two objects", valid(func(*impOpts) {}) + `{}`, "invalid_options"},
		{"unknown field", `{"mapping":[{"index":0,"target":"email"}],"dedup":"skip","has_header":true,"header":true}`, "invalid_options"},
		{"no has_header", `{"mapping":[{"index":0,"target":"email"}],"dedup":"skip"}`, "invalid_options"},
		{"no mapping", `{"dedup":"skip","has_header":true}`, "invalid_mapping"},
		{"empty mapping", valid(func(o *impOpts) { o.Mapping = []impColumn{} }), "invalid_mapping"},
		{"no email column", valid(func(o *impOpts) { o.Mapping = impCols("first_name") }), "invalid_mapping"},
		{"only ignored", valid(func(o *impOpts) { o.Mapping = impCols("ignore", "ignore") }), "invalid_mapping"},
		{"two email columns", valid(func(o *impOpts) { o.Mapping = impCols("email", "email") }), "invalid_mapping"},
		{"two first_name columns", valid(func(o *impOpts) { o.Mapping = impCols("email", "first_name", "first_name") }), "invalid_mapping"},
		{"column mapped twice", valid(func(o *impOpts) { o.Mapping = []impColumn{{0, "email", "", ""}, {0, "first_name", "", ""}} }), "invalid_mapping"},
		{"negative index", valid(func(o *impOpts) { o.Mapping = []impColumn{{-1, "email", "", ""}} }), "invalid_mapping"},
		{"no index", `{"mapping":[{"target":"email"}],"dedup":"skip","has_header":true}`, "invalid_mapping"},
		{"unknown target", valid(func(o *impOpts) { o.Mapping = impCols("email", "nickname") }), "invalid_mapping"},
		{"custom_key on a built-in", valid(func(o *impOpts) { o.Mapping = []impColumn{{0, "email", "", ""}, {1, "first_name", "x", ""}} }), "invalid_mapping"},
		{"provider off verification", valid(func(o *impOpts) { o.Mapping = []impColumn{{0, "email", "", ""}, {1, "first_name", "", "zerobounce"}} }), "invalid_mapping"},
		{"custom without key", valid(func(o *impOpts) { o.Mapping = impCols("email", "custom") }), "invalid_custom_field"},
		{"custom: without key", valid(func(o *impOpts) { o.Mapping = impCols("email", "custom:") }), "invalid_custom_field"},
		{"invalid custom key", valid(func(o *impOpts) { o.Mapping = impCols("email", "custom:job.title") }), "invalid_custom_field"},
		{"custom key twice", valid(func(o *impOpts) { o.Mapping = impCols("email", "custom:Plan", "custom:plan") }), "invalid_custom_field"},
		{"two custom keys", valid(func(o *impOpts) { o.Mapping = []impColumn{{0, "email", "", ""}, {1, "custom:a", "b", ""}} }), "invalid_custom_field"},
		{"too many custom fields", valid(func(o *impOpts) { o.Mapping = manyCustom }), "too_many_custom_fields"},
		{"unknown provider", valid(func(o *impOpts) {
			o.Mapping = []impColumn{{0, "email", "", ""}, {2, "verification_status", "", "acme"}}
		}), "unknown_verification_provider"},
		{"no dedup", valid(func(o *impOpts) { o.Dedup = "" }), "invalid_dedup"},
		{"unknown dedup", valid(func(o *impOpts) { o.Dedup = "merge" }), "invalid_dedup"},
		{"category not an id", valid(func(o *impOpts) { o.CategoryIDs = []string{"vip"} }), "unknown_category"},
		{"unknown category", valid(func(o *impOpts) { o.CategoryIDs = []string{uuid.NewString()} }), "unknown_category"},
		{"folder as category", valid(func(o *impOpts) { o.CategoryIDs = []string{folder.String()} }), "unknown_category"},
		{"other org's category", valid(func(o *impOpts) { o.CategoryIDs = []string{category.String(), foreign.String()} }), "unknown_category"},
		{"campaign not an id", valid(func(o *impOpts) { o.CampaignIDs = []string{"launch"} }), "unknown_campaign"},
		{"unknown campaign", valid(func(o *impOpts) { o.CampaignIDs = []string{uuid.NewString()} }), "unknown_campaign"},
		{"segment not an id", valid(func(o *impOpts) { o.SegmentIDs = []string{"x"} }), "unknown_segment"},
		{"unknown segment", valid(func(o *impOpts) { o.SegmentIDs = []string{uuid.NewString()} }), "unknown_segment"},
		{"too many ids", valid(func(o *impOpts) { o.CampaignIDs = manyIDs }), "too_many_ids"},
	} {
		_, err := impCommit(c, "a.csv", file, tc.opts)
		requireAPIError(t, err, http.StatusBadRequest, tc.code)
	}

	// One row over the limit (the header is not a row) is refused; the rows before it are not kept.
	var b strings.Builder
	b.WriteString("email\n")
	for i := range 50_001 {
		fmt.Fprintf(&b, "p%d@example.com\n", i)
	}
	_, err := impCommit(c, "big.csv", b.String(), valid(func(o *impOpts) { o.Mapping = impCols("email") }))
	requireAPIError(t, err, http.StatusBadRequest, "too_many_rows")

	for _, q := range []string{
		`SELECT count(*) FROM contacts WHERE organization_id = $1`,
		`SELECT count(*) FROM labels WHERE organization_id = $1`,
		`SELECT count(*) FROM contact_categories WHERE organization_id = $1`,
		`SELECT count(*) FROM segment_pins WHERE organization_id = $1`,
		`SELECT count(*) FROM campaign_leads WHERE organization_id = $1`,
		`SELECT count(*) FROM audit_log WHERE organization_id = $1 AND event = 'contacts.imported'`,
	} {
		n := impCount(t, env, org, q)
		if strings.Contains(q, "labels") {
			require.Equal(t, 2, n, "only the seeded labels")
			continue
		}
		require.Zero(t, n, q)
	}
}

func TestContactImportDedupModes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	file := "email,first_name,last_name,company,tier,plan,subscribed\n" +
		"ADA@example.com,,Lovelace,New Co,,pro,\n" +
		"bob@example.com,Bob,Builder,,silver,,no\n" +
		"cy@example.com,Cy,,,,,\n"
	mapping := []impColumn{{0, "email", "", ""}, {1, "first_name", "", ""}, {2, "last_name", "", ""}, {3, "company", "", ""},
		{4, "custom:tier", "", ""}, {5, "custom", "plan", ""}, {6, "subscribed", "", ""}}
	existing := map[string]string{"tier": "gold", "region": "eu"}
	run := func(t *testing.T, dedup string, subscribedDefault bool) (uuid.UUID, uuid.UUID, *api.ContactImportResult) {
		boot := env.Bootstrap(t, strings.ReplaceAll(dedup, "_", ""))
		ada := impSeedContact(t, env, boot.OrganizationID, "ada@example.com", "Ada", "Old Co", existing, false)
		res, err := impCommit(env.Client(t, boot.APIKey), "people.csv", file,
			impOpts{Mapping: mapping, Dedup: dedup, HasHeader: true, SubscribedDefault: &subscribedDefault}.String())
		require.NoError(t, err)
		requireImportSums(t, res)
		require.Equal(t, 3, res.Total)
		require.Zero(t, res.Failed)
		require.False(t, res.SegmentsPinned.Set, "segments_pinned only with segment_ids")
		require.False(t, res.ErrorsTruncated.Value)
		return boot.OrganizationID, ada, res
	}
	requireNew := func(t *testing.T, org uuid.UUID, email string, subscribed bool) impContact {
		c := impOne(t, env, org, email)
		require.Equal(t, "import", c.Source)
		require.False(t, c.SearchReady, "imported rows wait for the index job")
		require.Equal(t, subscribed, c.Subscribed)
		sec, nsec := c.ID.Time().UnixTime()
		require.True(t, c.CreatedAt.Equal(time.Unix(sec, nsec).Truncate(time.Millisecond)), "created_at is the UUIDv7's time")
		return c
	}

	t.Run("skip", func(t *testing.T) {
		org, ada, res := run(t, "skip", false)
		require.Equal(t, 2, res.Imported)
		require.Equal(t, 0, res.Updated)
		require.Equal(t, 1, res.Skipped)
		require.Equal(t, []string{"0 : 1 addresses were already contacts and were left unchanged (dedup skip)."}, impReasons(res))
		got := impOne(t, env, org, "ada@example.com")
		require.Equal(t, ada, got.ID)
		require.Equal(t, impContact{ID: ada, FirstName: "Ada", Company: "Old Co", Custom: existing, Source: "api", Status: "unknown",
			SearchReady: true, CreatedAt: got.CreatedAt}, got, "an existing contact is left exactly as it was")
		bob := requireNew(t, org, "bob@example.com", false)
		require.Equal(t, "Builder", bob.LastName)
		require.Equal(t, map[string]string{"tier": "silver"}, bob.Custom)
		requireNew(t, org, "cy@example.com", false) // blank cell: subscribed_default
	})
	t.Run("update", func(t *testing.T) {
		org, ada, res := run(t, "update", true)
		require.Equal(t, 2, res.Imported)
		require.Equal(t, 1, res.Updated)
		require.Equal(t, 0, res.Skipped)
		require.Empty(t, res.Errors)
		got := impOne(t, env, org, "ada@example.com")
		require.Equal(t, ada, got.ID)
		require.Equal(t, "Ada", got.FirstName, "an empty cell keeps the stored value")
		require.Equal(t, "Lovelace", got.LastName)
		require.Equal(t, "New Co", got.Company, "a sent value replaces")
		require.Equal(t, map[string]string{"tier": "gold", "region": "eu", "plan": "pro"}, got.Custom, "custom fields merge key by key")
		require.False(t, got.Subscribed, "a blank subscribed cell never resubscribes")
		require.Equal(t, "api", got.Source)
		require.False(t, got.SearchReady)
		requireNew(t, org, "bob@example.com", false)
		requireNew(t, org, "cy@example.com", true)
	})
	t.Run("create_duplicate", func(t *testing.T) {
		org, ada, res := run(t, "create_duplicate", true)
		require.Equal(t, 3, res.Imported)
		require.Equal(t, 0, res.Updated)
		require.Equal(t, 0, res.Skipped)
		both := impContacts(t, env, org, "ada@example.com")
		require.Len(t, both, 2)
		require.Equal(t, ada, both[0].ID)
		require.Zero(t, both[0].DuplicateSeq)
		require.Equal(t, "Old Co", both[0].Company, "the primary contact is untouched")
		require.Positive(t, both[1].DuplicateSeq)
		require.Equal(t, "New Co", both[1].Company)
		require.Equal(t, map[string]string{"plan": "pro"}, both[1].Custom)
		require.True(t, both[1].Subscribed)
		require.Equal(t, "import", both[1].Source)

		// Importing the same file again adds another duplicate of each address.
		boot := env.Client(t, scopedKey(t, env, org, auth.BulkContacts))
		res, err := impCommit(boot, "people.csv", file, impOpts{Mapping: mapping, Dedup: "create_duplicate", HasHeader: true}.String())
		require.NoError(t, err)
		require.Equal(t, 3, res.Imported)
		require.Len(t, impContacts(t, env, org, "ada@example.com"), 3)
	})
}

func TestContactImportRowReport(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	long := strings.Repeat("x", 256)
	longCat := strings.Repeat("c", 101)
	file := "email,name,subscribed,status,categories\n" +
		"ok1@example.com,A,yes,valid,\n" + // 2
		"not-an-email,B,,,\n" + // 3
		",C,,,\n" + // 4
		"\"Ok One <OK1@example.com>\",D,,,\n" + // 5: the display-name form is the address of line 2
		"ok2@example.com," + long + ",,,\n" + // 6
		"ok3@example.com,E,maybe,,\n" + // 7
		"ok4@example.com,F,,bogus,\n" + // 8
		"ok5@example.com,G,,,\"" + longCat + ";Beta\"\n" // 9
	res, err := impCommit(c, "report.csv", file,
		impOpts{Mapping: impCols("email", "first_name", "subscribed", "verification_status", "categories"), Dedup: "skip", HasHeader: true}.String())
	require.NoError(t, err)
	requireImportSums(t, res)
	require.Equal(t, 8, res.Total)
	require.Equal(t, 4, res.Imported)
	require.Equal(t, 1, res.Skipped)
	require.Equal(t, 3, res.Failed)
	require.Equal(t, []string{
		"0 : New categories created: Beta.",
		"3 not-an-email: not a valid email address",
		"4 : no email address",
		"5 ok1@example.com: repeats the address of line 2; skipped",
		"6 ok2@example.com: first_name is longer than 255 characters",
		`7 ok3@example.com: subscribed value "maybe" not understood; a new contact takes subscribed_default, an existing one keeps its subscription`,
		`8 ok4@example.com: verification value "bogus" is not a verdict any known verifier uses; left unverified`,
		`9 ok5@example.com: category name "` + longCat[:64] + `..." is longer than 100 characters; ignored`,
	}, impReasons(res), "whole-import notes first, then by line")
	require.Equal(t, []string{"not-an-email", "B", "", "", ""}, res.Errors[1].Values, "failed rows carry their cells")
	require.Nil(t, res.Errors[3].Values, "notes do not")
	require.Equal(t, api.ContactImportQuality{Malformed: 2, BadSharePct: 25}, res.Quality.Value)

	ok1 := impOne(t, env, org, "ok1@example.com")
	require.Equal(t, "A", ok1.FirstName, "the first row of an address wins")
	require.Equal(t, []string{"valid", "", "imported", ""}, []string{ok1.Status, ok1.SubStatus, ok1.VSource, ok1.VProv},
		"no provider named: the verdict is recognised but no verifier is guessed")
	require.NotNil(t, ok1.CheckedAt)
	require.WithinDuration(t, res.StartedAt, *ok1.CheckedAt, time.Second)
	ok4 := impOne(t, env, org, "ok4@example.com")
	require.Equal(t, []string{"unknown", "", ""}, []string{ok4.Status, ok4.VSource, ok4.VProv}, "an unrecognised verdict leaves the contact unverified")
	require.Nil(t, ok4.CheckedAt)
	require.True(t, impOne(t, env, org, "ok3@example.com").Subscribed)
	require.Empty(t, impContacts(t, env, org, "ok2@example.com"))
	require.Equal(t, 1, impCount(t, env, org, `SELECT count(*) FROM contact_categories cc JOIN labels l ON l.organization_id = cc.organization_id
		AND l.id = cc.category_id WHERE cc.organization_id = $1 AND l.title = 'Beta'`))
}

func TestContactImportVerdicts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	file := "email,ZB Status\na@example.com,valid\nb@example.com,Catch-All\nc@example.com,do_not_mail\nd@example.com,ok\ne@example.com,\n"
	res, err := impCommit(c, "zb.csv", file, impOpts{Mapping: []impColumn{{0, "email", "", ""}, {1, "verification_status", "", "ZeroBounce"}},
		Dedup: "skip", HasHeader: true}.String())
	require.NoError(t, err)
	require.Equal(t, 5, res.Imported)
	require.Equal(t, []string{`5 d@example.com: verification value "ok" is not a verdict zerobounce uses; left unverified`}, impReasons(res))
	for email, want := range map[string][]string{
		"a@example.com": {"valid", "", "imported", "zerobounce"},
		"b@example.com": {"risky", "catch_all", "imported", "zerobounce"},
		"c@example.com": {"invalid", "", "imported", "zerobounce"},
		"d@example.com": {"unknown", "", "", ""},
		"e@example.com": {"unknown", "", "", ""},
	} {
		got := impOne(t, env, org, email)
		require.Equal(t, want, []string{got.Status, got.SubStatus, got.VSource, got.VProv}, email)
	}
	require.Equal(t, 1, impCount(t, env, org, `SELECT count(*) FROM contacts WHERE organization_id = $1 AND is_catch_all`))
	// An imported verdict is checked when the import started (the response's times are to the second); a
	// contact is created during it.
	a := impOne(t, env, org, "a@example.com")
	require.NotNil(t, a.CheckedAt)
	require.WithinDuration(t, res.StartedAt, *a.CheckedAt, time.Second)
	require.Nil(t, impOne(t, env, org, "d@example.com").CheckedAt)
	require.WithinRange(t, a.CreatedAt, res.StartedAt.Add(-time.Second), res.EndedAt.Add(time.Second))

	// Without a provider, any vocabulary (ok_for_all is emaillistverify's). An update replaces the stored
	// verdict only when the row carries one.
	res, err = impCommit(c, "mixed.csv", "email,status\na@example.com,\nb@example.com,ok_for_all\n",
		impOpts{Mapping: impCols("email", "verification_status"), Dedup: "update", HasHeader: true}.String())
	require.NoError(t, err)
	require.Equal(t, 2, res.Updated)
	a = impOne(t, env, org, "a@example.com")
	require.Equal(t, []string{"valid", "zerobounce"}, []string{a.Status, a.VProv})
	b := impOne(t, env, org, "b@example.com")
	require.Equal(t, []string{"risky", "catch_all", "imported", ""}, []string{b.Status, b.SubStatus, b.VSource, b.VProv})
}

func TestContactImportTruncatedReport(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	var b strings.Builder
	b.WriteString("email,categories\ngood@example.com,Fresh\n")
	for i := range 1500 {
		fmt.Fprintf(&b, "bad%d,\n", i)
	}
	res, err := impCommit(c, "bad.csv", b.String(), impOpts{Mapping: impCols("email", "categories"), Dedup: "skip", HasHeader: true}.String())
	require.NoError(t, err)
	requireImportSums(t, res)
	require.Equal(t, 1501, res.Total)
	require.Equal(t, 1500, res.Failed)
	require.Len(t, res.Errors, 1000)
	require.True(t, res.ErrorsTruncated.Value)
	require.Equal(t, "0 : New categories created: Fresh.", impReasons(res)[0], "the whole-import note survives truncation")
	require.Equal(t, 3, res.Errors[1].Line)
	require.Equal(t, 1001, res.Errors[999].Line)
	q := res.Quality.Value
	require.Equal(t, 1500, q.Malformed)
	require.InDelta(t, 99.93, q.BadSharePct, 0.001)
	require.True(t, q.Flagged)
}

func TestContactImportQualityFlag(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	quality := func(good, bad int) api.ContactImportQuality {
		var b strings.Builder
		for i := range good {
			fmt.Fprintf(&b, "p%d.%d@example.com\n", good, i)
		}
		for i := range bad {
			fmt.Fprintf(&b, "broken%d@\n", i)
		}
		res, err := impCommit(c, "q.csv", b.String(), impOpts{Mapping: impCols("email"), Dedup: "skip"}.String())
		require.NoError(t, err)
		require.Equal(t, good, res.Imported)
		return res.Quality.Value
	}
	require.Equal(t, api.ContactImportQuality{Malformed: 6, BadSharePct: 30, Flagged: true}, quality(14, 6))
	require.Equal(t, api.ContactImportQuality{Malformed: 5, BadSharePct: 25}, quality(15, 5), "flagged only above 25 percent")
	require.Equal(t, api.ContactImportQuality{Malformed: 10, BadSharePct: 52.63}, quality(9, 10), "advisory only from 20 rows")

	// Disposable addresses count towards the bad share; role accounts are counted but do not.
	var b strings.Builder
	for i := range 14 {
		fmt.Fprintf(&b, "person%d@example.org\n", i)
	}
	b.WriteString("info@example.org\nsales+eu@example.org\n")
	for i := range 4 {
		fmt.Fprintf(&b, "throwaway%d@mailinator.com\n", i)
	}
	res, err := impCommit(c, "q2.csv", b.String(), impOpts{Mapping: impCols("email"), Dedup: "skip"}.String())
	require.NoError(t, err)
	require.Equal(t, 20, res.Imported, "quality is advisory: every address is imported")
	require.Equal(t, api.ContactImportQuality{Disposable: 4, Role: 2, BadSharePct: 20}, res.Quality.Value)
}

func TestContactImportLinks(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	old := impSeedContact(t, env, org, "old@example.com", "Old", "", nil, true)
	vip := impSeedRow(t, env, org, `INSERT INTO labels (organization_id, id, kind, title, position) VALUES ($1, $2, 'category', 'VIP', 0)`)
	imported := impSeedRow(t, env, org, `INSERT INTO labels (organization_id, id, kind, title, position) VALUES ($1, $2, 'category', 'Imported', 1)`)
	campaign := impSeedRow(t, env, org, `INSERT INTO campaigns (organization_id, id, name) VALUES ($1, $2, 'Launch')`)
	segment := impSeedRow(t, env, org, `INSERT INTO segments (organization_id, id, name, kind) VALUES ($1, $2, 'Static', 'static')`)
	// An exclude pin on the existing contact turns into an include.
	impOrgQuery(t, env, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO segment_pins (organization_id, segment_id, contact_id, include) VALUES ($1, $2, $3, false)`, org, segment, old)
		return err
	})

	file := "email,categories\nold@example.com,vip\nnew1@example.com,\"VIP; Newcat, newcat\"\nnew2@example.com,\n"
	res, err := impCommit(c, "links.csv", file, impOpts{Mapping: impCols("email", "categories"), Dedup: "skip", HasHeader: true,
		CategoryIDs: []string{imported.String(), imported.String()}, CampaignIDs: []string{campaign.String()},
		SegmentIDs: []string{segment.String()}}.String())
	require.NoError(t, err)
	requireImportSums(t, res)
	require.Equal(t, 2, res.Imported)
	require.Equal(t, 1, res.Skipped)
	require.Equal(t, 3, res.SegmentsPinned.Value, "imported and skipped-but-linked contacts")
	require.Equal(t, []string{"0 : 1 addresses were already contacts and were left unchanged (dedup skip).",
		"0 : New categories created: Newcat."}, impReasons(res))

	categoriesOf := func(email string) []string {
		var out []string
		impOrgQuery(t, env, org, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT coalesce(array_agg(l.title ORDER BY l.title), '{}') FROM contacts c
				JOIN contact_categories cc ON cc.organization_id = c.organization_id AND cc.contact_id = c.id
				JOIN labels l ON l.organization_id = cc.organization_id AND l.id = cc.category_id
				WHERE c.organization_id = $1 AND c.email = $2`, org, email).Scan(&out)
		})
		return out
	}
	require.Equal(t, []string{"Imported", "VIP"}, categoriesOf("old@example.com"))
	require.Equal(t, []string{"Imported", "Newcat", "VIP"}, categoriesOf("new1@example.com"))
	require.Equal(t, []string{"Imported"}, categoriesOf("new2@example.com"))
	require.Equal(t, 1, impCount(t, env, org, `SELECT count(*) FROM labels WHERE organization_id = $1 AND lower(title) = 'newcat' AND kind = 'category' AND position = 2`))
	require.Equal(t, 2, impCount(t, env, org, `SELECT contact_count FROM labels WHERE organization_id = $1 AND id = $2`, vip))
	require.Equal(t, 3, impCount(t, env, org, `SELECT contact_count FROM labels WHERE organization_id = $1 AND id = $2`, imported))
	require.Equal(t, 3, impCount(t, env, org, `SELECT count(*) FROM campaign_leads WHERE organization_id = $1 AND campaign_id = $2 AND state = 'pending'`, campaign))
	require.Equal(t, 3, impCount(t, env, org, `SELECT count(*) FROM contacts WHERE organization_id = $1 AND campaign_count = 1`))
	require.Equal(t, 3, impCount(t, env, org, `SELECT count(*) FROM segment_pins WHERE organization_id = $1 AND segment_id = $2 AND include`, segment))

	// Linking again changes nothing and still counts every contact as pinned.
	res, err = impCommit(c, "links.csv", file, impOpts{Mapping: impCols("email", "categories"), Dedup: "update", HasHeader: true,
		CategoryIDs: []string{imported.String()}, CampaignIDs: []string{campaign.String()}, SegmentIDs: []string{segment.String()}}.String())
	require.NoError(t, err)
	require.Equal(t, 3, res.Updated)
	require.Equal(t, 3, res.SegmentsPinned.Value)
	require.Empty(t, res.Errors)
	require.Equal(t, 3, impCount(t, env, org, `SELECT contact_count FROM labels WHERE organization_id = $1 AND id = $2`, imported))
	require.Equal(t, 3, impCount(t, env, org, `SELECT count(*) FROM labels WHERE organization_id = $1`), "no category created twice")
}

// TestContactImportIndexing checks what an import leaves behind: rows outside the search indexes, found
// through the pending id ranges it recorded, until the index job (enqueued in the import's transaction) runs
// and drops the ranges; one audit entry; no contact.created events.
func TestContactImportIndexing(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	res, err := impCommit(c, "three.csv", "a@example.com\nb@example.com\nc@example.com\nnot an address\n", impOpts{Mapping: impCols("email"), Dedup: "skip"}.String())
	require.NoError(t, err)
	require.Equal(t, 3, res.Imported)
	require.Equal(t, 3, impCount(t, env, org, `SELECT count(*) FROM contacts WHERE organization_id = $1 AND NOT search_ready`))
	require.Zero(t, impCount(t, env, org, `SELECT count(*) FROM event_outbox WHERE organization_id = $1 AND event_type LIKE 'contact.%'`))
	var meta map[string]any
	impOrgQuery(t, env, org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT metadata FROM audit_log WHERE organization_id = $1 AND event = 'contacts.imported' AND target_type = 'contact'`, org).Scan(&meta)
	})
	require.Equal(t, map[string]any{"filename": "three.csv", "format": "csv", "dedup": "skip", "total": float64(4),
		"imported": float64(3), "updated": float64(0), "skipped": float64(0), "failed": float64(1)}, meta)
	var jobs int
	require.NoError(t, env.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'contacts_index' AND args->>'organization_id' = $1`, org.String()).Scan(&jobs))
	require.Equal(t, 1, jobs)

	// Searches find the rows through the range of ids the import recorded, each once even where two ranges
	// cover it (concurrent imports' ranges can overlap).
	require.Equal(t, 1, impCount(t, env, org, `SELECT count(*) FROM contact_index_pending WHERE organization_id = $1`))
	orgExec(t, env, org, `INSERT INTO contact_index_pending (organization_id, lo, hi) SELECT organization_id, lo, hi FROM contact_index_pending WHERE organization_id = $1`, org)
	for _, q := range []string{"example.com", ""} {
		got := searchContacts(t, c, api.ContactSearchRequest{Query: api.NewOptString(q), Subscribed: api.NewOptBool(true)}, api.ContactsSearchParams{})
		require.Equal(t, []string{"a@example.com", "b@example.com", "c@example.com"}, sortedEmails(got.Data), q)
		require.Equal(t, int64(3), got.Pagination.Total.Value, q)
	}

	// An import that updates existing contacts takes them out of the indexes and records each id.
	res, err = impCommit(c, "update.csv", "b@example.com,Bea\n", impOpts{Mapping: impCols("email", "first_name"), Dedup: "update"}.String())
	require.NoError(t, err)
	require.Equal(t, 1, res.Updated)
	bob := impOne(t, env, org, "b@example.com")
	require.Equal(t, 1, impCount(t, env, org, `SELECT count(*) FROM contact_index_pending WHERE organization_id = $1 AND lo = $2 AND hi = $2`, bob.ID))
	got := searchContacts(t, c, api.ContactSearchRequest{Query: api.NewOptString("bea")}, api.ContactsSearchParams{})
	require.Equal(t, []string{"b@example.com"}, contactEmails(got.Data))

	env.StartWorkers(t)
	require.Eventually(t, func() bool {
		return impCount(t, env, org, `SELECT count(*) FROM contacts WHERE organization_id = $1 AND NOT search_ready`) == 0 &&
			impCount(t, env, org, `SELECT count(*) FROM contact_index_pending WHERE organization_id = $1`) == 0
	}, 15*time.Second, 50*time.Millisecond, "every row indexed and every range dropped")
	require.Equal(t, 3, impCount(t, env, org, `SELECT count(*) FROM contacts WHERE organization_id = $1 AND search_ready`))
	got = searchContacts(t, c, api.ContactSearchRequest{Query: api.NewOptString("bea")}, api.ContactsSearchParams{})
	require.Equal(t, []string{"b@example.com"}, contactEmails(got.Data), "found through the search index")
}

// TestContactImportConcurrentWriter covers the first import into an empty organization, which inserts without
// per-row conflict checks: when another writer commits one of the file's addresses meanwhile, the insert
// falls back to the checked path instead of failing.
func TestContactImportConcurrentWriter(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	ctx := context.Background()

	other, err := env.DB.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = other.Rollback(ctx) }()
	_, err = other.Exec(ctx, "SELECT set_config('outflow.organization_id', $1, true)", org.String())
	require.NoError(t, err)
	id, at, err := contacts.NewID()
	require.NoError(t, err)
	_, err = other.Exec(ctx, `INSERT INTO contacts (organization_id, id, email, first_name, created_at, updated_at) VALUES ($1, $2, 'ada@example.com', 'Ada', $3, $3)`, org, id, at)
	require.NoError(t, err)

	type outcome struct {
		res *api.ContactImportResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := impCommit(env.Client(t, boot.APIKey), "race.csv", "email,first\nada@example.com,Augusta\nbob@example.com,Bob\n",
			impOpts{Mapping: impCols("email", "first_name"), Dedup: "update", HasHeader: true}.String())
		done <- outcome{res, err}
	}()
	// The import saw an empty organization and now waits on the other writer's uncommitted row.
	owner, err := pgx.Connect(ctx, env.DB.URL)
	require.NoError(t, err)
	defer owner.Close(ctx)
	require.Eventually(t, func() bool {
		var waiting bool
		err := owner.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO contacts%')`).Scan(&waiting)
		return err == nil && waiting
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, other.Commit(ctx))

	got := <-done
	require.NoError(t, got.err)
	require.Equal(t, 1, got.res.Imported)
	require.Equal(t, 1, got.res.Updated, "the checked path found the address the other writer committed")
	require.Equal(t, "Augusta", impOne(t, env, org, "ada@example.com").FirstName)
	require.Equal(t, "import", impOne(t, env, org, "bob@example.com").Source)
}
