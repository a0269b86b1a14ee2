package db_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

// BenchmarkOrgTx compares an organization-scoped transaction (which also sets the organization for row-level
// security) with a plain one running the same tenant query.
func BenchmarkOrgTx(b *testing.B) {
	d := dbtest.New(b)
	ctx := context.Background()
	res := bootstrap(b, d, "acme")
	query := func(ctx context.Context, tx pgx.Tx) error {
		var n int
		return tx.QueryRow(ctx, "SELECT count(*) FROM api_keys WHERE organization_id = $1", res.OrganizationID).Scan(&n)
	}
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			if err := db.WithTx(ctx, d.Pool, query); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("outflow", func(b *testing.B) {
		for b.Loop() {
			if err := db.WithOrgTx(ctx, d.Pool, res.OrganizationID, query); err != nil {
				b.Fatal(err)
			}
		}
	})
}
