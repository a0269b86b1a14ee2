package db_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

func bootstrap(t testing.TB, d *dbtest.DB, name string) accounts.BootstrapResult {
	t.Helper()
	res, err := accounts.Bootstrap(context.Background(), d.Pool, name+"@example.com", "a long enough password", name)
	require.NoError(t, err)
	return res
}

// TestRowLevelSecurityIsolatesOrganizations runs queries without any organization filter inside one
// organization's scope and proves they see nothing of another organization.
func TestRowLevelSecurityIsolatesOrganizations(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	a := bootstrap(t, d, "alpha")
	b := bootstrap(t, d, "beta")
	// A contact and a pending index range in each (written as the owner), for the tables whose policy
	// evaluates the organization once per statement.
	for i, org := range []uuid.UUID{a.OrganizationID, b.OrganizationID} {
		id := uuid.Must(uuid.NewV7())
		_, err := d.OwnerPool(t).Exec(ctx, `INSERT INTO contacts (organization_id, id, email) VALUES ($1, $2, $3)`, org, id, fmt.Sprintf("p%d@example.com", i))
		require.NoError(t, err)
		_, err = d.OwnerPool(t).Exec(ctx, `INSERT INTO contact_index_pending (organization_id, lo, hi) VALUES ($1, $2, $2)`, org, id)
		require.NoError(t, err)
	}

	for _, tc := range []struct {
		scope, other uuid.UUID
	}{{a.OrganizationID, b.OrganizationID}, {b.OrganizationID, a.OrganizationID}} {
		err := db.WithOrgTx(ctx, d.Pool, tc.scope, func(ctx context.Context, tx pgx.Tx) error {
			for _, table := range []string{"api_keys", "audit_log", "memberships", "contacts", "contact_index_pending"} {
				var total, foreign int
				require.NoError(t, tx.QueryRow(ctx, fmt.Sprintf("SELECT count(*), count(*) FILTER (WHERE organization_id = $1) FROM %s", table), tc.other).Scan(&total, &foreign))
				require.Positive(t, total, table)
				require.Zero(t, foreign, "%s leaked rows of another organization", table)
			}
			var orgs []uuid.UUID
			rows, _ := tx.Query(ctx, "SELECT id FROM organizations")
			orgs, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
			require.NoError(t, err)
			require.Equal(t, []uuid.UUID{tc.scope}, orgs)

			// Writing a row for another organization from this scope is refused by the policy's WITH CHECK.
			_, err = tx.Exec(ctx, "SAVEPOINT s")
			require.NoError(t, err)
			_, err = tx.Exec(ctx, `INSERT INTO audit_log (organization_id, id, actor_type, action) VALUES ($1, $2, 'system', 'x')`, tc.other, uuid.New())
			var pgErr *pgconn.PgError
			require.ErrorAs(t, err, &pgErr)
			require.Equal(t, "42501", pgErr.Code, "row-level security violation expected")
			_, err = tx.Exec(ctx, "ROLLBACK TO SAVEPOINT s")
			require.NoError(t, err)
			// So is a contact, also when the statement writes many rows from a query (an import's shape).
			_, err = tx.Exec(ctx, `INSERT INTO contacts (organization_id, id, email)
				SELECT $1, gen_random_uuid(), 'x' || g || '@example.com' FROM generate_series(1, 3) g`, tc.other)
			require.ErrorAs(t, err, &pgErr)
			require.Equal(t, "42501", pgErr.Code, "row-level security violation expected for contacts")
			_, err = tx.Exec(ctx, "ROLLBACK TO SAVEPOINT s")
			return err
		})
		require.NoError(t, err)
	}

	// Outside any organization scope the application role sees no tenant rows at all.
	var n int
	require.NoError(t, d.Pool.QueryRow(ctx, "SELECT count(*) FROM api_keys").Scan(&n))
	require.Zero(t, n)

	// The owner (who bypasses RLS) sees both: the rows exist, the wall is RLS.
	require.NoError(t, d.OwnerPool(t).QueryRow(ctx, "SELECT count(*) FROM api_keys").Scan(&n))
	require.Equal(t, 2, n)
}

func TestWithTxRollsBackOnError(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	err := db.WithTx(ctx, d.Pool, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO system_heartbeats (name, beat_at) VALUES ('t', now())")
		require.NoError(t, err)
		return fmt.Errorf("boom")
	})
	require.EqualError(t, err, "boom")
	var n int
	require.NoError(t, d.Pool.QueryRow(ctx, "SELECT count(*) FROM system_heartbeats WHERE name = 't'").Scan(&n))
	require.Zero(t, n)

	require.Error(t, db.WithOrgTx(ctx, d.Pool, uuid.Nil, func(context.Context, pgx.Tx) error { return nil }),
		"an organization-scoped transaction without an organization is refused")
}

// TestTenantQueriesNameOrganization fails when a query in queries/ touches a tenant table without naming
// organization_id in its SQL: RLS is the second wall, never the only one.
func TestTenantQueriesNameOrganization(t *testing.T) {
	t.Parallel()
	schema, err := os.ReadFile(filepath.Join("..", "..", "..", "schema.sql"))
	require.NoError(t, err)
	tenant := tenantTables(string(schema))
	require.Contains(t, tenant, "api_keys", "the schema parser must find the tenant tables")

	files, err := filepath.Glob(filepath.Join("..", "..", "..", "queries", "*.sql"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, q := range splitQueries(string(src)) {
			for _, table := range tenant {
				if regexp.MustCompile(`\b`+table+`\b`).MatchString(q.sql) && !strings.Contains(q.sql, "organization_id") {
					t.Errorf("%s: query %s reads or writes tenant table %s without organization_id", filepath.Base(f), q.name, table)
				}
			}
		}
	}
}

func tenantTables(schema string) []string {
	var out []string
	re := regexp.MustCompile(`(?s)CREATE TABLE public\.(\w+) \((.*?)\n\);`)
	for _, m := range re.FindAllStringSubmatch(schema, -1) {
		if strings.Contains(m[2], "organization_id uuid NOT NULL") || m[1] == "organizations" {
			out = append(out, m[1])
		}
	}
	return out
}

type query struct{ name, sql string }

func splitQueries(src string) []query {
	var out []query
	for _, part := range strings.Split(src, "-- name: ")[1:] {
		name, body, _ := strings.Cut(part, "\n")
		var sql []string
		for _, line := range strings.Split(body, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "--") {
				sql = append(sql, line)
			}
		}
		out = append(out, query{name: strings.Fields(name)[0], sql: strings.Join(sql, "\n")})
	}
	return out
}
