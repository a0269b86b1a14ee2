package abtest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

// rig is one organization with a campaign of one step: a control and an alternative on the step, and two
// campaign-level variants.
type rig struct {
	d                          *dbtest.DB
	org, camp, step            uuid.UUID
	control, alt, wide1, wide2 uuid.UUID
}

func setup(t *testing.T) rig {
	t.Helper()
	d := dbtest.New(t)
	boot, err := accounts.Bootstrap(context.Background(), d.Pool, "owner@acme.example", "a long enough password", "acme")
	require.NoError(t, err)
	r := rig{d: d, org: boot.OrganizationID, camp: uuid.New(), step: uuid.New(), control: uuid.New(), alt: uuid.New(),
		wide1: uuid.New(), wide2: uuid.New()}
	r.exec(t, `INSERT INTO campaigns (organization_id, id, name) VALUES ($1, $2, 'AB')`, r.org, r.camp)
	r.exec(t, `INSERT INTO campaign_steps (organization_id, campaign_id, id, position, name) VALUES ($1, $2, $3, 0, 'Intro')`, r.org, r.camp, r.step)
	for i, v := range []struct {
		id      uuid.UUID
		step    uuid.NullUUID
		name    string
		control bool
	}{
		{r.control, uuid.NullUUID{UUID: r.step, Valid: true}, "Original", true},
		{r.alt, uuid.NullUUID{UUID: r.step, Valid: true}, "Short", false},
		{r.wide1, uuid.NullUUID{}, "Wide 1", false},
		{r.wide2, uuid.NullUUID{}, "Wide 2", false},
	} {
		r.exec(t, `INSERT INTO campaign_variants (organization_id, campaign_id, id, step_id, name, is_control, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, now() + $7 * interval '1 second')`, r.org, r.camp, v.id, v.step, v.name, v.control, i)
	}
	return r
}

func (r rig) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	}))
}

func (r rig) count(t *testing.T, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, sql, args...).Scan(&n)
	}))
	return n
}

// sends records n campaign send tasks of variant in status with error code, replied when replied is set.
func (r rig) sends(t *testing.T, variant uuid.UUID, n int, status, code string, replied bool) {
	t.Helper()
	r.exec(t, `INSERT INTO send_tasks (organization_id, id, kind, status, error_code, to_email, campaign_id, step_id, variant_id, replied_at)
		SELECT $1, gen_random_uuid(), 'campaign', $4, $5, 'lead' || g || '@example.com', $2, $3, $6,
		  CASE WHEN $7::boolean THEN now() END
		FROM generate_series(1, $8::int) g`, r.org, r.camp, r.step, status, code, variant, replied, n)
}

// autoPromote sets the campaign's ab_testing block: reply rate, a sample of 10, auto-promotion as given.
func (r rig) autoPromote(t *testing.T, on bool) {
	t.Helper()
	r.exec(t, `UPDATE campaigns SET advanced = jsonb_build_object('ab_testing', jsonb_build_object('enabled', true,
		'default_winning_rule', 'reply_rate', 'auto_promote_winner', $3::boolean, 'min_sample_size', 10))
		WHERE organization_id = $1 AND id = $2`, r.org, r.camp, on)
}

func (r rig) promote(t *testing.T, now time.Time) []Verdict {
	t.Helper()
	var out []Verdict
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) (err error) {
		out, err = Promote(ctx, tx, r.org, r.camp, now)
		return err
	}))
	return out
}

func (r rig) promoted(t *testing.T) map[uuid.UUID]time.Time {
	t.Helper()
	out := map[uuid.UUID]time.Time{}
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, promoted_at FROM campaign_variants WHERE organization_id = $1 AND campaign_id = $2
			AND promoted_at IS NOT NULL`, r.org, r.camp)
		if err != nil {
			return err
		}
		var id uuid.UUID
		var at time.Time
		_, err = pgx.ForEachRow(rows, []any{&id, &at}, func() error { out[id] = at.UTC(); return nil })
		return err
	}))
	return out
}

func (r rig) logLines(t *testing.T) int64 {
	t.Helper()
	return r.count(t, `SELECT count(*) FROM campaign_logs WHERE organization_id = $1 AND campaign_id = $2 AND event_type = 'ab_winner_promoted'`, r.org, r.camp)
}

func TestLoadCountsEachVariantsSendsByWhatHappenedToThem(t *testing.T) {
	t.Parallel()
	r := setup(t)
	r.sends(t, r.alt, 3, "sent", "", true)
	r.sends(t, r.alt, 2, "ambiguous", "", false)
	r.sends(t, r.alt, 2, "failed", "recipient_rejected", false)
	r.sends(t, r.alt, 1, "failed", "smtp_timeout", false)
	r.sends(t, r.alt, 4, "queued", "", false)
	r.sends(t, r.alt, 1, "canceled", "", false)
	r.exec(t, `UPDATE send_tasks SET opened_at = now(), clicked_at = now() WHERE organization_id = $1 AND variant_id = $2
		AND status IN ('sent', 'failed')`, r.org, r.alt)
	r.exec(t, `UPDATE send_tasks SET bounced_at = now() WHERE organization_id = $1 AND variant_id = $2 AND status = 'ambiguous'`, r.org, r.alt)
	r.sends(t, r.control, 1, "sent", "", false)
	r.sends(t, uuid.New(), 5, "sent", "", true) // a variant since deleted: counted for nobody
	// Another campaign's sends never count, even with this variant's id.
	other := uuid.New()
	r.exec(t, `INSERT INTO campaigns (organization_id, id, name) VALUES ($1, $2, 'Other')`, r.org, other)
	r.exec(t, `INSERT INTO send_tasks (organization_id, id, kind, status, to_email, campaign_id, variant_id)
		VALUES ($1, gen_random_uuid(), 'campaign', 'sent', 'x@example.com', $2, $3)`, r.org, other, r.alt)

	var got []Counts
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) (err error) {
		got, err = Load(ctx, tx, r.org, r.camp)
		return err
	}))
	step := uuid.NullUUID{UUID: r.step, Valid: true}
	require.Equal(t, []Counts{
		{VariantID: r.control, Name: "Original", StepID: step, IsControl: true, IsActive: true, Sent: 1},
		// 5 handed over (3 sent, 2 ambiguous); the 3 sent were opened and clicked, the failed ones' stamps do not
		// count; 2 refused plus 2 ambiguous that bounced later.
		{VariantID: r.alt, Name: "Short", StepID: step, IsActive: true, Sent: 5, Opened: 3, Clicked: 3, Replied: 3, Bounced: 4, Rejected: 2},
		{VariantID: r.wide1, Name: "Wide 1", IsActive: true},
		{VariantID: r.wide2, Name: "Wide 2", IsActive: true},
	}, got)
}

func TestPromoteStampsAGroupsWinnerOnceAndNeverMovesIt(t *testing.T) {
	t.Parallel()
	r := setup(t)
	// The step: 6 of 10 replies against 1 of 10 (z = 2.3440, medium). Campaign-level: one variant short of 10.
	r.sends(t, r.alt, 6, "sent", "", true)
	r.sends(t, r.alt, 4, "sent", "", false)
	r.sends(t, r.control, 1, "sent", "", true)
	r.sends(t, r.control, 9, "sent", "", false)
	r.sends(t, r.wide1, 10, "sent", "", true)
	r.sends(t, r.wide2, 9, "sent", "", false)
	t0 := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)

	require.Empty(t, r.promote(t, t0), "auto_promote_winner is off by default")
	r.autoPromote(t, false)
	require.Empty(t, r.promote(t, t0))
	require.Empty(t, r.promoted(t))

	r.autoPromote(t, true)
	done := r.promote(t, t0)
	require.Len(t, done, 1)
	require.Equal(t, r.alt, done[0].Winner.VariantID)
	require.Equal(t, map[uuid.UUID]time.Time{r.alt: t0}, r.promoted(t), "only the decided group's winner, at now")
	require.EqualValues(t, 1, r.logLines(t))
	var msg, rule, runnerUp string
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT message, metadata->>'winning_rule', metadata->'runner_up'->>'variant_id' FROM campaign_logs
			WHERE organization_id = $1 AND campaign_id = $2 AND event_type = 'ab_winner_promoted'`, r.org, r.camp).Scan(&msg, &rule, &runnerUp)
	}))
	require.Equal(t, `Variant "Short" won among its step's variants by reply_rate: 6 of 10 sends (60.00%) against "Original"'s `+
		`1 of 10 (10.00%), z = 2.34, medium confidence. Only it is sent from now on.`, msg)
	require.Equal(t, "reply_rate", rule)
	require.Equal(t, r.control.String(), runnerUp)

	// Again: nothing new, no second line.
	require.Empty(t, r.promote(t, t0.Add(time.Hour)))
	require.Equal(t, map[uuid.UUID]time.Time{r.alt: t0}, r.promoted(t))

	// The control overtakes the promoted variant: the promotion stays. The campaign-level group is decided now
	// and promoted on its own.
	r.sends(t, r.control, 40, "sent", "", true)
	r.sends(t, r.wide2, 1, "sent", "", false)
	done = r.promote(t, t0.Add(2*time.Hour))
	require.Len(t, done, 1)
	require.Equal(t, r.wide1, done[0].Winner.VariantID)
	require.Equal(t, map[uuid.UUID]time.Time{r.alt: t0, r.wide1: t0.Add(2 * time.Hour)}, r.promoted(t))
	require.EqualValues(t, 2, r.logLines(t))
}

func TestPromoteRacingItselfPromotesOnce(t *testing.T) {
	t.Parallel()
	r := setup(t)
	r.autoPromote(t, true)
	r.sends(t, r.alt, 10, "sent", "", true)
	r.sends(t, r.control, 10, "sent", "", false)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			errs[i] = db.WithOrgTx(context.Background(), r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
				_, err := Promote(ctx, tx, r.org, r.camp, time.Now())
				return err
			})
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	require.Len(t, r.promoted(t), 1)
	require.EqualValues(t, 1, r.logLines(t))
}

// TestPromoteWaitsForAConcurrentPromotionOfTheSameGroup runs two promotions that see different winners of one
// step: the first sees sends it has not committed yet. The second must wait for the first and then leave the
// group as the first promoted it, not promote its own winner beside it.
func TestPromoteWaitsForAConcurrentPromotionOfTheSameGroup(t *testing.T) {
	t.Parallel()
	r := setup(t)
	r.autoPromote(t, true)
	r.sends(t, r.control, 5, "sent", "", true)
	r.sends(t, r.control, 5, "sent", "", false)
	r.sends(t, r.alt, 10, "sent", "", false)
	ctx := context.Background()

	promoted, release, firstDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		firstDone <- db.WithOrgTx(ctx, r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
			// 30 more replied sends of the alternative, seen by this transaction only: it wins here.
			if _, err := tx.Exec(ctx, `INSERT INTO send_tasks (organization_id, id, kind, status, to_email, campaign_id, variant_id, replied_at)
				SELECT $1, gen_random_uuid(), 'campaign', 'sent', 'x@example.com', $2, $3, now() FROM generate_series(1, 30)`,
				r.org, r.camp, r.alt); err != nil {
				return err
			}
			done, err := Promote(ctx, tx, r.org, r.camp, time.Now())
			if err != nil || len(done) != 1 || done[0].Winner.VariantID != r.alt {
				return errors.Join(err, errors.New("the first promotion did not promote the alternative"))
			}
			close(promoted)
			<-release
			return nil
		})
	}()
	select {
	case <-promoted:
	case err := <-firstDone:
		t.Fatalf("first promotion: %v", err)
	}

	pid, second := make(chan uint32, 1), make(chan []Verdict, 1)
	secondDone := make(chan error, 1)
	go func() {
		secondDone <- db.WithOrgTx(ctx, r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
			var p uint32
			if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&p); err != nil {
				return err
			}
			pid <- p
			done, err := Promote(ctx, tx, r.org, r.camp, time.Now())
			second <- done
			return err
		})
	}()
	// Release the first once the second waits for a lock (or has finished: then the test fails below).
	backend := <-pid
	owner := r.d.OwnerPool(t)
	require.Eventually(t, func() bool {
		var waiting bool
		require.NoError(t, owner.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted)`, int32(backend)).Scan(&waiting))
		return waiting || len(second) > 0
	}, 10*time.Second, 10*time.Millisecond)
	close(release)
	require.NoError(t, <-firstDone)
	require.NoError(t, <-secondDone)
	require.Empty(t, <-second, "the second saw the control win, but the group was promoted meanwhile")
	require.Equal(t, []uuid.UUID{r.alt}, slices.Collect(maps.Keys(r.promoted(t))))
	require.EqualValues(t, 1, r.logLines(t))
}

func TestPromoteAndReadRefuseAnotherOrganizationsCampaign(t *testing.T) {
	t.Parallel()
	r := setup(t)
	other, err := accounts.Bootstrap(context.Background(), r.d.Pool, "owner@globex.example", "a long enough password", "globex")
	require.NoError(t, err)
	err = db.WithOrgTx(context.Background(), r.d.Pool, other.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		_, err := Promote(ctx, tx, other.OrganizationID, r.camp, time.Now())
		return err
	})
	var e *apierror.Error
	require.True(t, errors.As(err, &e), "%v", err)
	require.Equal(t, "campaign_not_found", e.Code)
}
