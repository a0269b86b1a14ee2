package contacts_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

// TestTheIndexJobIndexesABacklogInBatchesAndSettlesTheIndexes runs the index job over 12,000 rows an import
// wrote outside the search indexes (one range, three batches), a row another writer indexed inside that range
// and an earlier contact an import updated (a range of its own, below the big one): every row ends indexed and
// every range dropped; the trigram indexes' pending lists are merged, and the table is analyzed because the
// planner took the organization for a handful of rows. A later run over a few rows, with the statistics
// right, leaves them as they are, unless the import asked for the analyze.
func TestTheIndexJobIndexesABacklogInBatchesAndSettlesTheIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	owner := d.OwnerPool(t)
	org := uuid.New()
	for _, sql := range []string{
		`CREATE EXTENSION pgstattuple`,
		// The statistics are the job's alone (the test database's autovacuum would analyze when it likes).
		`ALTER TABLE contacts SET (autovacuum_enabled = false)`,
		fmt.Sprintf(`INSERT INTO organizations (id, name) VALUES ('%s', 'acme')`, org),
	} {
		_, err := owner.Exec(ctx, sql)
		require.NoError(t, err)
	}
	gen := contacts.NewIDs()
	updated := seedContacts(t, owner, org, gen, 1, false)
	backlog := seedContacts(t, owner, org, gen, 6000, false)
	backlog = append(backlog, seedContacts(t, owner, org, gen, 1, true)...)
	backlog = append(backlog, seedContacts(t, owner, org, gen, 6000, false)...)
	pending(t, owner, org, updated[0], updated[0])
	pending(t, owner, org, backlog[0], backlog[len(backlog)-1])

	work := func(analyze bool) {
		t.Helper()
		w := &contacts.IndexWorker{Pool: d.Pool}
		require.NoError(t, w.Work(ctx, &river.Job[contacts.IndexArgs]{Args: contacts.IndexArgs{OrganizationID: org, Analyze: analyze}}))
	}
	count := func(sql string) int64 {
		t.Helper()
		var n int64
		require.NoError(t, owner.QueryRow(ctx, sql).Scan(&n))
		return n
	}
	work(false)
	require.Zero(t, count(`SELECT count(*) FROM contacts WHERE NOT search_ready`))
	require.Equal(t, int64(12002), count(`SELECT count(*) FROM contacts WHERE search_ready`))
	require.Zero(t, count(`SELECT count(*) FROM contact_index_pending`))
	require.Zero(t, count(`SELECT sum(pending_pages) FROM (SELECT (pgstatginindex(i)).pending_pages FROM unnest('{contacts_search,contacts_custom_fields}'::regclass[]) i) p`))
	require.Equal(t, int64(12002), count(`SELECT reltuples::bigint FROM pg_class WHERE relname = 'contacts'`), "analyzed")

	more := seedContacts(t, owner, org, gen, 100, false)
	pending(t, owner, org, more[0], more[len(more)-1])
	work(false)
	require.Zero(t, count(`SELECT count(*) FROM contacts WHERE NOT search_ready`))
	require.Equal(t, int64(12002), count(`SELECT reltuples::bigint FROM pg_class WHERE relname = 'contacts'`), "not analyzed again")

	// An import that analyzed the organization column from a small sample asks for the full analyze.
	more = seedContacts(t, owner, org, gen, 100, false)
	pending(t, owner, org, more[0], more[len(more)-1])
	work(true)
	require.Equal(t, int64(12202), count(`SELECT reltuples::bigint FROM pg_class WHERE relname = 'contacts'`), "analyzed as asked")
}

// seedContacts writes n contacts of org with increasing ids, inside the search indexes or outside them as an
// import leaves its rows, and returns their ids.
func seedContacts(t *testing.T, owner *pgxpool.Pool, org uuid.UUID, gen *contacts.IDs, n int, ready bool) []uuid.UUID {
	t.Helper()
	ids := make([]uuid.UUID, n)
	for i := range ids {
		var err error
		ids[i], _, err = gen.Next()
		require.NoError(t, err)
	}
	_, err := owner.Exec(context.Background(), `INSERT INTO contacts (organization_id, id, email, first_name, last_name, company, search_ready)
		SELECT $1, id, 'person' || id || '@example.com', 'First', 'Last' || n, 'Company ' || n % 100, $3
		FROM unnest($2::uuid[]) WITH ORDINALITY AS s(id, n)`, org, ids, ready)
	require.NoError(t, err)
	return ids
}

// pending records a range of ids as an import does.
func pending(t *testing.T, owner *pgxpool.Pool, org, lo, hi uuid.UUID) {
	t.Helper()
	_, err := owner.Exec(context.Background(), `INSERT INTO contact_index_pending (organization_id, lo, hi) VALUES ($1, $2, $3)`, org, lo, hi)
	require.NoError(t, err)
}
