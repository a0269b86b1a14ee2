package events_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// effectConsumer records its effect as an audit entry naming itself and the event, in its own transaction
// (as a consumer with side effects would record them), and fails its first failures calls after recording
// it, so a failed call's effect exists only if the transaction wrongly commits.
type effectConsumer struct {
	name     string
	calls    atomic.Int32
	failures int32
	// enter and release, when set, hold each call after its effect until release is closed.
	enter   chan struct{}
	release chan struct{}
}

func (c *effectConsumer) Name() string { return c.name }

func (c *effectConsumer) Consume(ctx context.Context, tx pgx.Tx, ev events.Event) error {
	n := c.calls.Add(1)
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: ev.Type, EntityType: "contact",
		EntityID: c.name + ":" + ev.ID.String()}); err != nil {
		return err
	}
	if c.enter != nil {
		c.enter <- struct{}{}
		<-c.release
	}
	if n <= c.failures {
		return errors.New(c.name + " is down")
	}
	return nil
}

// effects counts the committed effects of consumer on event id.
func (b *bundle) effects(t *testing.T, consumer string, id uuid.UUID) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.OwnerPool(t).QueryRow(context.Background(),
		"SELECT count(*) FROM audit_log WHERE target_id = $1", consumer+":"+id.String()).Scan(&n))
	return n
}

// acknowledged lists the consumers that acknowledged event id, by name.
func (b *bundle) acknowledged(t *testing.T, id uuid.UUID) []string {
	t.Helper()
	rows, err := b.db.OwnerPool(t).Query(context.Background(),
		"SELECT consumer FROM event_consumer_acks WHERE organization_id = $1 AND event_id = $2 ORDER BY consumer", b.org, id)
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return names
}

func (b *bundle) dispatched(t *testing.T, id uuid.UUID) bool {
	t.Helper()
	var done bool
	require.NoError(t, b.db.OwnerPool(t).QueryRow(context.Background(),
		"SELECT dispatched_at IS NOT NULL FROM event_outbox WHERE organization_id = $1 AND id = $2", b.org, id).Scan(&done))
	return done
}

// A consumer that fails does not stop the others, and the retry runs only the consumer that failed: the ones
// that succeeded keep their one effect and are not called again.
func TestARetryRunsOnlyTheConsumersThatHaveNotAcknowledged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	id, err := b.write(ctx, nil)
	require.NoError(t, err)
	args := events.DispatchArgs{OrganizationID: b.org, EventID: id}
	before := &effectConsumer{name: "before"}
	flaky := &effectConsumer{name: "flaky", failures: 1}
	after := &effectConsumer{name: "after"}
	d := events.NewDispatcher(b.db.Pool, before, flaky, after)

	err = d.Dispatch(ctx, args)
	require.ErrorContains(t, err, "flaky is down")
	require.NotContains(t, err.Error(), "before")
	require.NotContains(t, err.Error(), "after")
	require.EqualValues(t, 1, after.calls.Load(), "a failing consumer does not keep the next one from its event")
	require.Equal(t, []string{"after", "before"}, b.acknowledged(t, id))
	require.Zero(t, b.effects(t, "flaky", id), "the failed consumer's effect rolled back with its acknowledgement")
	require.False(t, b.dispatched(t, id))

	require.NoError(t, d.Dispatch(ctx, args))
	require.EqualValues(t, 1, before.calls.Load(), "a consumer that acknowledged is not run again")
	require.EqualValues(t, 2, flaky.calls.Load())
	require.EqualValues(t, 1, after.calls.Load(), "a consumer that acknowledged is not run again")
	require.NoError(t, d.Dispatch(ctx, args), "a retried job after the dispatch is a no-op")
	for _, c := range []*effectConsumer{before, flaky, after} {
		require.Equal(t, 1, b.effects(t, c.name, id), "%s's effect is there once", c.name)
	}
	require.Equal(t, []string{"after", "before", "flaky"}, b.acknowledged(t, id))
	require.True(t, b.dispatched(t, id))
}

// The event is marked dispatched only once every consumer has acknowledged it: not while one keeps failing,
// and, when a run was cut after the last acknowledgement but before the mark, by the next run without
// running anyone again.
func TestTheEventIsDispatchedOnlyWhenEveryConsumerAcknowledged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	id, err := b.write(ctx, nil)
	require.NoError(t, err)
	args := events.DispatchArgs{OrganizationID: b.org, EventID: id}
	steady := &effectConsumer{name: "steady"}
	down := &effectConsumer{name: "down", failures: 3}
	d := events.NewDispatcher(b.db.Pool, steady, down)
	for attempt := 1; attempt <= 3; attempt++ {
		require.ErrorContains(t, d.Dispatch(ctx, args), "down is down")
		require.False(t, b.dispatched(t, id), "attempt %d: one consumer has not acknowledged", attempt)
		require.Equal(t, []string{"steady"}, b.acknowledged(t, id))
	}
	require.NoError(t, d.Dispatch(ctx, args))
	require.True(t, b.dispatched(t, id))
	require.EqualValues(t, 1, steady.calls.Load())
	require.EqualValues(t, 4, down.calls.Load())

	// A run cut between the last acknowledgement and the mark: every consumer acknowledged, the event is not
	// dispatched. The next run runs nobody and marks it.
	cut, err := b.write(ctx, nil)
	require.NoError(t, err)
	_, err = b.db.OwnerPool(t).Exec(ctx, `INSERT INTO event_consumer_acks (organization_id, event_id, consumer)
		VALUES ($1, $2, 'steady'), ($1, $2, 'down')`, b.org, cut)
	require.NoError(t, err)
	require.NoError(t, d.Dispatch(ctx, events.DispatchArgs{OrganizationID: b.org, EventID: cut}))
	require.True(t, b.dispatched(t, cut))
	require.EqualValues(t, 1, steady.calls.Load())
	require.EqualValues(t, 4, down.calls.Load())

	// The same with one consumer left (a deployment that dropped the other).
	alone, err := b.write(ctx, nil)
	require.NoError(t, err)
	_, err = b.db.OwnerPool(t).Exec(ctx, `INSERT INTO event_consumer_acks (organization_id, event_id, consumer)
		VALUES ($1, $2, 'steady')`, b.org, alone)
	require.NoError(t, err)
	require.NoError(t, events.NewDispatcher(b.db.Pool, steady).Dispatch(ctx, events.DispatchArgs{OrganizationID: b.org, EventID: alone}))
	require.True(t, b.dispatched(t, alone))
	require.EqualValues(t, 1, steady.calls.Load())

	// A consumer added later (a new deployment) runs for the events not dispatched yet, and only then are they.
	late, err := b.write(ctx, nil)
	require.NoError(t, err)
	_, err = b.db.OwnerPool(t).Exec(ctx, `INSERT INTO event_consumer_acks (organization_id, event_id, consumer)
		VALUES ($1, $2, 'steady'), ($1, $2, 'down')`, b.org, late)
	require.NoError(t, err)
	added := &effectConsumer{name: "added", failures: 1}
	grown := events.NewDispatcher(b.db.Pool, steady, down, added)
	require.ErrorContains(t, grown.Dispatch(ctx, events.DispatchArgs{OrganizationID: b.org, EventID: late}), "added is down")
	require.False(t, b.dispatched(t, late))
	require.NoError(t, grown.Dispatch(ctx, events.DispatchArgs{OrganizationID: b.org, EventID: late}))
	require.True(t, b.dispatched(t, late))
	require.Equal(t, 1, b.effects(t, "added", late))
}

// Two runs of one event at once (a rescued job beside a live one) run each consumer once: the second waits
// on the first's acknowledgement and, once it commits, skips the consumer.
func TestConcurrentRunsOfOneEventRunEachConsumerOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	id, err := b.write(ctx, nil)
	require.NoError(t, err)
	args := events.DispatchArgs{OrganizationID: b.org, EventID: id}
	held := &effectConsumer{name: "held", enter: make(chan struct{}, 2), release: make(chan struct{})}
	d := events.NewDispatcher(b.db.Pool, held)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = d.Dispatch(ctx, args) })
	<-held.enter // the first run holds the acknowledgement, mid-work
	wg.Go(func() { errs[1] = d.Dispatch(ctx, args) })
	owner := b.db.OwnerPool(t)
	require.Eventually(t, func() bool {
		var waiting int
		_ = owner.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%event_consumer_acks%'`).Scan(&waiting)
		return waiting == 1
	}, 10*time.Second, 10*time.Millisecond, "the second run waits on the first one's acknowledgement")
	close(held.release)
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.EqualValues(t, 1, held.calls.Load())
	require.Equal(t, 1, b.effects(t, "held", id))
	require.True(t, b.dispatched(t, id))
}

// Acknowledgements are tenant rows: another organization's scope sees none of them.
func TestAcknowledgementsStayInTheirOrganization(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	other, err := accounts.Bootstrap(ctx, b.db.Pool, "owner@globex.example", "correct horse battery staple", "globex")
	require.NoError(t, err)
	id, err := b.write(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, events.NewDispatcher(b.db.Pool, &effectConsumer{name: "one"}).Dispatch(ctx,
		events.DispatchArgs{OrganizationID: b.org, EventID: id}))
	count := func(org uuid.UUID) int {
		var n int
		require.NoError(t, db.WithOrgTx(ctx, b.db.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT count(*) FROM event_consumer_acks").Scan(&n)
		}))
		return n
	}
	require.Equal(t, 1, count(b.org))
	require.Zero(t, count(other.OrganizationID))
	_, err = b.db.Pool.Exec(ctx, `INSERT INTO event_consumer_acks (organization_id, event_id, consumer) VALUES ($1, $2, 'two')`, b.org, id)
	require.Error(t, err, "outside an organization's scope nothing is written")
}

// A consumer's name is stored with its acknowledgements, so a malformed or repeated one is refused when the
// dispatcher is built, not at the first event.
func TestConsumerNamesAreCheckedWhenTheDispatcherIsBuilt(t *testing.T) {
	t.Parallel()
	for _, names := range [][]string{{""}, {"Webhooks"}, {"web-hooks"}, {"1st"}, {"a", "b", "a"}} {
		consumers := make([]events.Consumer, len(names))
		for i, n := range names {
			consumers[i] = &effectConsumer{name: n}
		}
		require.Panics(t, func() { events.NewDispatcher(nil, consumers...) }, "%q", names)
	}
	require.NotPanics(t, func() {
		events.NewDispatcher(nil, &effectConsumer{name: "webhooks"}, &effectConsumer{name: "realtime"}, &effectConsumer{name: "crm_push2"})
	})
}
