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

// impCommit imports data as name with opts and answers the 200 answer (a 202 is an error here).
func impCommit(c *api.Client, name, data string, opts string) (*api.ContactImportResult, error) {
	res, err := c.ContactsImportCommit(context.Background(), &api.ContactsImportCommitReq{File: impFile(name, []byte(data)), Options: opts},
		api.ContactsImportCommitParams{})
	if err != nil {
		return nil, err
	}
	ok, is := res.(*api.ContactsImportCommitOK)
	if !is {
		return nil, fmt.Errorf("want 200, got %T", res)
	}
	out := api.ContactImportResult(*ok)
	return &out, nil
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
