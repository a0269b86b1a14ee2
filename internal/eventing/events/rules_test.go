package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/accounts"
)

// TestPruneKeepsAWeekOfEventsInEveryOrganization ages events of two organizations by 6 and 8 days: the
// 8-day-old ones go, dispatched or not, with their consumers' acknowledgements, and the 6-day-old ones stay
// with theirs.
func TestPruneKeepsAWeekOfEventsInEveryOrganization(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	other, err := accounts.Bootstrap(ctx, b.db.Pool, "owner@globex.example", "correct horse battery staple", "globex")
	require.NoError(t, err)
	owner := b.db.OwnerPool(t)
	_, err = owner.Exec(ctx, `INSERT INTO event_outbox (organization_id, id, event_type, data, created_at, dispatched_at)
		SELECT org, gen_random_uuid(), 'contact.created', jsonb_build_object('age', age), now() - age * interval '1 day',
		       CASE WHEN dispatched THEN now() END
		FROM unnest($1::uuid[]) AS org, unnest(ARRAY[6, 8]) AS age, unnest(ARRAY[true, false]) AS dispatched`,
		[]any{b.org, other.OrganizationID})
	require.NoError(t, err)
	require.Equal(t, 8, b.count(t, "SELECT count(*) FROM event_outbox"))
	_, err = owner.Exec(ctx, `INSERT INTO event_consumer_acks (organization_id, event_id, consumer, acknowledged_at)
		SELECT organization_id, id, consumer, created_at FROM event_outbox, unnest(ARRAY['webhooks', 'realtime']) AS consumer
		WHERE dispatched_at IS NOT NULL OR consumer = 'realtime'`)
	require.NoError(t, err)
	require.Equal(t, 12, b.count(t, "SELECT count(*) FROM event_consumer_acks"))

	removed, err := events.Prune(ctx, b.db.Pool, time.Now())
	require.NoError(t, err)
	require.EqualValues(t, 4, removed)
	rows, err := owner.Query(ctx, "SELECT DISTINCT (data->>'age')::int FROM event_outbox")
	require.NoError(t, err)
	ages, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	require.Equal(t, []int{6}, ages)
	require.Equal(t, 4, b.count(t, "SELECT count(*) FROM event_outbox"), "both organizations keep their recent events")
	require.Equal(t, 6, b.count(t, `SELECT count(*) FROM event_consumer_acks a
		JOIN event_outbox o ON o.organization_id = a.organization_id AND o.id = a.event_id`), "and their acknowledgements")
	require.Equal(t, 6, b.count(t, "SELECT count(*) FROM event_consumer_acks"), "the pruned events' acknowledgements went with them")

	removed, err = events.Prune(ctx, b.db.Pool, time.Now())
	require.NoError(t, err)
	require.Zero(t, removed)
}

// blockingConsumer handles an event until its context ends, as a consumer stuck on a lock or a slow
// dependency does.
type blockingConsumer struct{ cut chan error }

func (c blockingConsumer) Name() string { return "blocking" }

func (c blockingConsumer) Consume(ctx context.Context, _ pgx.Tx, _ events.Event) error {
	<-ctx.Done()
	c.cut <- ctx.Err()
	return ctx.Err()
}

// TestASlowHandlerIsCutAtTheDispatchTimeout runs a dispatch whose consumer never finishes: it is cut at the
// dispatcher's timeout (HandlerTimeout in production, shortened here), the attempt fails and the event stays
// undispatched for the next attempt.
func TestASlowHandlerIsCutAtTheDispatchTimeout(t *testing.T) {
	t.Parallel()
	require.Equal(t, 30*time.Second, events.HandlerTimeout)
	b := setup(t)
	ctx := context.Background()
	id, err := b.write(ctx, nil)
	require.NoError(t, err)

	consumer := blockingConsumer{cut: make(chan error, 1)}
	d := events.NewDispatcher(b.db.Pool, consumer).WithTimeout(300 * time.Millisecond)
	start := time.Now()
	err = d.Dispatch(ctx, events.DispatchArgs{OrganizationID: b.org, EventID: id})
	elapsed := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, <-consumer.cut, context.DeadlineExceeded, "the handler's own context ended")
	require.GreaterOrEqual(t, elapsed, 300*time.Millisecond)
	require.Less(t, elapsed, 5*time.Second)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM event_outbox WHERE dispatched_at IS NULL"))
}
