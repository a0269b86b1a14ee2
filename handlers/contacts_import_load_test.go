package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/audience/contacts"
)

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

// TestSearchesPageThroughAnImportBeforeItIsIndexed covers the seconds after an import commits and before the
// index job has run, with the import's rows in one pending range: every sort pages through them and the
// contacts indexed before, each once and in order (the pending arm orders and limits inside the range's scan),
// and a text or custom-field search bounded by its trigram lookup reads the indexed and the pending matches
// by key, with the same totals.
func TestSearchesPageThroughAnImportBeforeItIsIndexed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	impSeedContact(t, env, org, "zed@early.example", "zed", "acme early", map[string]string{"plan": "gold"}, true)
	file := "email,first,last,company,plan\n"
	for i := range 120 {
		plan := "tin"
		if i%10 == 0 {
			plan = "gold"
		}
		file += fmt.Sprintf("p%03d@file.example,f%03d,l%03d,acme,%s\n", i, 119-i, i*7%120, plan)
	}
	res, err := impCommit(c, "pending.csv", file, impOpts{Mapping: impCols("email", "first_name", "last_name", "company", "custom:plan"),
		Dedup: "skip", HasHeader: true}.String())
	require.NoError(t, err)
	require.Equal(t, 120, res.Imported)
	require.Equal(t, 120, impCount(t, env, org, `SELECT count(*) FROM contacts WHERE organization_id = $1 AND NOT search_ready`))
	require.Equal(t, 1, impCount(t, env, org, `SELECT count(*) FROM contact_index_pending WHERE organization_id = $1`))

	collect := func(body api.ContactSearchRequest) ([]string, int64) {
		var out []string
		params := api.ContactsSearchParams{Limit: api.NewOptString("50")}
		total := int64(-1)
		for range 10 {
			page := searchContacts(t, c, body, params)
			if total < 0 {
				total = page.Pagination.Total.Value
			}
			out = append(out, contactEmails(page.Data)...)
			if !page.Pagination.HasMore {
				return out, total
			}
			params.Cursor = api.NewOptString(page.Pagination.NextCursor.Value)
		}
		t.Fatal("paging did not end")
		return nil, 0
	}
	// want lists the organization's contacts matching where in order, as the database sorts them.
	want := func(where, order string) []string {
		var out []string
		impOrgQuery(t, env, org, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT array_agg(email ORDER BY `+order+`) FROM contacts c WHERE organization_id = $1 AND `+where, org).Scan(&out)
		})
		return out
	}
	for _, tc := range []struct {
		sort    string
		reverse bool
		order   string
	}{
		{"created_at", false, "id DESC"},
		{"created_at", true, "id"},
		{"first_name", false, "first_name DESC, id DESC"},
		{"last_name", true, "last_name, id"},
		{"email", false, "email DESC, duplicate_seq DESC"},
	} {
		got, total := collect(api.ContactSearchRequest{SortBy: api.NewOptString(tc.sort), Reverse: api.NewOptBool(tc.reverse)})
		require.Equal(t, want("true", tc.order), got, "%s reverse %t", tc.sort, tc.reverse)
		require.Equal(t, int64(121), total)
	}
	for _, tc := range []struct {
		body  api.ContactSearchRequest
		where string
	}{
		{api.ContactSearchRequest{Query: api.NewOptString("acme")}, "true"},
		{api.ContactSearchRequest{Query: api.NewOptString("f11"), SortBy: api.NewOptString("last_name")}, "first_name LIKE 'f11%'"},
		{api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "plan", Value: "GOLD", Type: "equal"}}},
			"custom_fields->>'plan' = 'gold'"},
	} {
		order := "id DESC"
		if tc.body.SortBy.Value == "last_name" {
			order = "last_name DESC, id DESC"
		}
		got, total := collect(tc.body)
		require.Equal(t, want(tc.where, order), got, tc.where)
		require.Equal(t, int64(len(got)), total, tc.where)
	}
}

// TestALargeFirstImportTellsThePlannerTheOrganizationsSize covers the statistics an import leaves: in a table
// whose statistics know only another organization, the planner takes a new one for a single row, so every plan
// that reads "the organization's rows" looks free. A first import of 10,000 rows analyzes the organization
// column in its own transaction and asks the index job to analyze in full; a later import into the same
// organization, with the statistics right, does neither.
func TestALargeFirstImportTellsThePlannerTheOrganizationsSize(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	owner := env.DB.OwnerPool(t)
	other := env.Bootstrap(t, "other")
	impSeedContact(t, env, other.OrganizationID, "someone@other.example", "Some", "Other", nil, true)
	for _, sql := range []string{`ALTER TABLE contacts SET (autovacuum_enabled = false)`, `ANALYZE contacts`} {
		_, err := owner.Exec(ctx, sql)
		require.NoError(t, err)
	}
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	c := env.Client(t, boot.APIKey)
	estimate := func() float64 {
		t.Helper()
		var plan []map[string]map[string]any
		require.NoError(t, owner.QueryRow(ctx, `EXPLAIN (FORMAT JSON) SELECT 1 FROM contacts WHERE organization_id = $1`, org).Scan(&plan))
		return plan[0]["Plan"]["Plan Rows"].(float64)
	}
	analyzeAsked := func() []bool {
		t.Helper()
		var out []bool
		require.NoError(t, owner.QueryRow(ctx, `SELECT array_agg(coalesce((args->>'analyze')::boolean, false) ORDER BY id) FROM river_job
			WHERE kind = 'contacts_index' AND args->>'organization_id' = $1`, org.String()).Scan(&out))
		return out
	}
	file := func(from, n int) string {
		var b strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, "p%05d@file.example\n", i)
		}
		return b.String()
	}
	require.Less(t, estimate(), 10.0)
	res, err := impCommit(c, "first.csv", file(0, 10000), impOpts{Mapping: impCols("email"), Dedup: "skip"}.String())
	require.NoError(t, err)
	require.Equal(t, 10000, res.Imported)
	require.InDelta(t, 10000, estimate(), 1000)
	require.Equal(t, []bool{true}, analyzeAsked())
	tuples := func() int64 {
		t.Helper()
		var n int64
		require.NoError(t, owner.QueryRow(ctx, `SELECT reltuples::bigint FROM pg_class WHERE relname = 'contacts'`).Scan(&n))
		return n
	}
	require.Equal(t, int64(10001), tuples())

	res, err = impCommit(c, "second.csv", file(10000, 2000), impOpts{Mapping: impCols("email"), Dedup: "skip"}.String())
	require.NoError(t, err)
	require.Equal(t, 2000, res.Imported)
	require.Equal(t, int64(10001), tuples(), "not analyzed again")
	require.Equal(t, []bool{true, false}, analyzeAsked())
}
