package rollup_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/analytics/metrics"
	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/internal/testkit/rolluptest"
)

// rig is one organization in its own database, with an owner pool to seed and read rows past row-level
// security.
type rig struct {
	d     *dbtest.DB
	owner *pgxpool.Pool
	org   uuid.UUID
}

func newRig(t testing.TB) *rig {
	t.Helper()
	d := dbtest.New(t)
	res, err := accounts.Bootstrap(context.Background(), d.Pool, "ada@example.com", "a long enough password", "Ada")
	require.NoError(t, err)
	return &rig{d: d, owner: d.OwnerPool(t), org: res.OrganizationID}
}

func (r *rig) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	_, err := r.owner.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

func (r *rig) campaign(t testing.TB, name string) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	r.exec(t, "INSERT INTO campaigns (organization_id, id, name) VALUES ($1, $2, $3)", r.org, id, name)
	return id
}

func (r *rig) apply(t testing.TB, facts ...rollup.Fact) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return rollup.Apply(ctx, tx, r.org, facts)
	}))
}

// snapshot is every non-zero counter row of the organization, one line each, keyed by table and key.
func (r *rig) snapshot(t testing.TB) map[string]string {
	t.Helper()
	rows, err := rolluptest.Rows(context.Background(), r.owner, r.org)
	require.NoError(t, err)
	out := make(map[string]string, len(rows))
	for k, c := range rows {
		out[k] = fmt.Sprint(rolluptest.Values(c))
	}
	return out
}

func TestApplyAddsDeltasToEveryTableAndANegativeOneTakesBack(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	camp, step, variant, box := r.campaign(t, "Launch"), uuid.New(), uuid.New(), uuid.New()
	at := time.Date(2026, 3, 1, 23, 59, 59, 0, time.UTC)
	sent := rollup.Fact{At: at, Kind: rollup.KindCampaign, Campaign: camp, Step: step, Variant: variant, Mailbox: box,
		Provider: "gmail", Counters: metrics.Counters{Sent: 1}}
	open := sent
	open.At, open.Counters = at.Add(2*time.Second), metrics.Counters{Opens: 1, MachineOpens: 1}
	r.apply(t, sent, sent, open)
	snap := r.snapshot(t)
	require.Equal(t, "[2 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_org_days 2026-03-01 campaign"])
	require.Equal(t, "[0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_org_days 2026-03-02 campaign"], "the open fell on the next UTC day")
	require.Equal(t, "[2 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_campaign_days "+camp.String()+" 2026-03-01"])
	require.Equal(t, "[2 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_step_days "+camp.String()+" "+step.String()+" "+variant.String()+" 2026-03-01"])
	require.Equal(t, "[2 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_campaign_hours "+camp.String()+" 2026-03-01 23:00:00"])
	require.Equal(t, "[0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_campaign_hours "+camp.String()+" 2026-03-02 00:00:00"])
	require.Equal(t, "[2 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_mailbox_days "+box.String()+" 2026-03-01 campaign gmail"])
	require.Len(t, snap, 10, "five tables, two days each")

	// A person's open takes the machine open back on the first open's day; an undone send takes one back.
	undo := sent
	undo.Counters = metrics.Counters{Sent: -1}
	human := open
	human.Counters = metrics.Counters{MachineOpens: -1}
	r.apply(t, undo, human)
	snap = r.snapshot(t)
	require.Equal(t, "[1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_org_days 2026-03-01 campaign"])
	require.Equal(t, "[0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_org_days 2026-03-02 campaign"])
	require.Equal(t, "[1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_mailbox_days "+box.String()+" 2026-03-01 campaign gmail"])

	// Facts that cancel out write nothing; a fact without campaign or mailbox only counts for the organization.
	r.apply(t, undo, sent)
	r.apply(t, rollup.Fact{At: at, Kind: rollup.KindDirect, Counters: metrics.Counters{Unsubscribes: 1}})
	after := r.snapshot(t)
	require.Equal(t, "[0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0]", after["analytics_org_days 2026-03-01 direct"])
	delete(after, "analytics_org_days 2026-03-01 direct")
	require.Equal(t, snap, after)
}

func TestApplySkipsTheRowsOfACampaignDeletedMeanwhileAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	gone, kept, box := r.campaign(t, "Gone"), r.campaign(t, "Kept"), uuid.New()
	r.exec(t, "DELETE FROM campaigns WHERE organization_id = $1 AND id = $2", r.org, gone)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	r.apply(t,
		rollup.Fact{At: at, Kind: rollup.KindCampaign, Campaign: gone, Step: uuid.New(), Mailbox: box, Provider: "outlook",
			Counters: metrics.Counters{Sent: 1}},
		rollup.Fact{At: at, Kind: rollup.KindCampaign, Campaign: kept, Counters: metrics.Counters{Sent: 1}})
	snap := r.snapshot(t)
	require.Equal(t, map[string]string{
		"analytics_org_days 2026-03-01 campaign":                                  "[2 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"analytics_mailbox_days " + box.String() + " 2026-03-01 campaign outlook": "[1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"analytics_campaign_days " + kept.String() + " 2026-03-01":                "[1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"analytics_campaign_hours " + kept.String() + " 2026-03-01 10:00:00":      "[1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
	}, snap, "the deleted campaign's rows are skipped, the organization's and the mailbox's still count its send")
}
