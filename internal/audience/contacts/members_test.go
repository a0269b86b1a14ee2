package contacts_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

// TestMembershipsReadByKeyAgreeWithTheMembershipQuery reads, for some contacts, which segments they belong to
// (a static segment's pins; dynamic segments by text, by a custom field that some contacts lack and by
// campaign count, with an include and an exclude pin) and checks each against MembersSQL, the membership the
// enrolment of campaigns uses, among them rows an import left outside the search indexes.
func TestMembershipsReadByKeyAgreeWithTheMembershipQuery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	owner := d.OwnerPool(t)
	org := uuid.New()
	_, err := owner.Exec(ctx, `INSERT INTO organizations (id, name) VALUES ($1, 'acme')`, org)
	require.NoError(t, err)
	gen := contacts.NewIDs()
	ids := seedContacts(t, owner, org, gen, 6, true)
	ids = append(ids, seedContacts(t, owner, org, gen, 2, false)...) // imported, not yet indexed
	pending(t, owner, org, ids[6], ids[7])
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := owner.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	exec(`UPDATE contacts SET custom_fields = '{"stage": "Hot"}' WHERE id = ANY($1)`, []uuid.UUID{ids[1], ids[2], ids[7]})
	exec(`UPDATE contacts SET campaign_count = 2 WHERE id = $1`, ids[3])
	static, byText, byField, byCount := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	exec(`INSERT INTO segments (organization_id, id, name, kind, filters) VALUES ($1, $2, 'static', 'static', NULL),
		($1, $3, 'text', 'dynamic', $6), ($1, $4, 'field', 'dynamic', $7), ($1, $5, 'count', 'dynamic', '{"min_campaigns": 2}')`,
		org, static, byText, byField, byCount, fmt.Sprintf(`{"query": "%s"}`, "last5"),
		`{"custom_field_filters": [{"name": "stage", "value": "hot", "type": "equal"}]}`)
	exec(`INSERT INTO segment_pins (organization_id, segment_id, contact_id, include) VALUES ($1, $2, $3, true), ($1, $4, $5, true),
		($1, $4, $6, false)`, org, static, ids[0], byField, ids[4], ids[2])
	segments := []uuid.UUID{static, byText, byField, byCount, uuid.New()}

	require.NoError(t, db.WithOrgTx(ctx, d.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		got, err := contacts.Memberships(ctx, tx, org, segments, ids)
		require.NoError(t, err)
		require.True(t, got.ReadLeads, "min_campaigns reads the contacts' leads")
		for _, s := range segments {
			sql, args, err := contacts.MembersSQL(ctx, tx, org, []uuid.UUID{s})
			require.NoError(t, err)
			rows, err := tx.Query(ctx, sql+" ORDER BY c.id", args...)
			require.NoError(t, err)
			want, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
			require.NoError(t, err)
			members := append([]uuid.UUID{}, got.Of[s]...)
			slices.SortFunc(members, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
			require.Equal(t, want, members, "segment %s", s)
		}
		require.Equal(t, []uuid.UUID{ids[0]}, got.Of[static])
		require.Equal(t, []uuid.UUID{ids[4]}, got.Of[byText], "Last5 by name")
		require.ElementsMatch(t, []uuid.UUID{ids[1], ids[4], ids[7]}, got.Of[byField], "hot, the include pin and the unindexed row; not the excluded")
		require.Equal(t, []uuid.UUID{ids[3]}, got.Of[byCount])

		some, err := contacts.Memberships(ctx, tx, org, segments, []uuid.UUID{ids[1], ids[5]})
		require.NoError(t, err)
		require.Equal(t, map[uuid.UUID][]uuid.UUID{byField: {ids[1]}}, some.Of, "only the contacts asked for")
		return nil
	}))
}
