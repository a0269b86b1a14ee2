package jobs_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/heartbeat"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/jobs"
)

type channelConsumer chan events.Event

func (c channelConsumer) Name() string { return "channel" }

func (c channelConsumer) Consume(_ context.Context, _ pgx.Tx, ev events.Event) error {
	c <- ev
	return nil
}

// TestWorkersDispatchEventsAndRunPeriodicJobs runs a real worker client: an event emitted in a committed
// transaction reaches the consumer, the heartbeat beats and the idempotency, credential and outbox sweeps run
// at start.
func TestWorkersDispatchEventsAndRunPeriodicJobs(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	res, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)

	owner := d.OwnerPool(t)
	_, err = owner.Exec(ctx, `INSERT INTO idempotency_keys (organization_id, credential_id, key, request_hash, state, locked_until, expires_at)
		VALUES ($1, gen_random_uuid(), 'stale', '\x00', 'completed', now(), now() - interval '1 hour')`, res.OrganizationID)
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `INSERT INTO api_key_usage_logs (organization_id, id, api_key_id, endpoint, method, response_code, response_time_ms, created_at)
		VALUES ($1, gen_random_uuid(), $2, '/old', 'GET', 200, 1, now() - interval '91 days'),
		       ($1, gen_random_uuid(), $2, '/recent', 'GET', 200, 1, now() - interval '89 days')`, res.OrganizationID, res.APIKeyID)
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `INSERT INTO event_outbox (organization_id, id, event_type, data, created_at, dispatched_at)
		VALUES ($1, gen_random_uuid(), 'contact.created', '{"age": 8}', now() - interval '8 days', now() - interval '8 days'),
		       ($1, gen_random_uuid(), 'contact.created', '{"age": 6}', now() - interval '6 days', now() - interval '6 days')`, res.OrganizationID)
	require.NoError(t, err)

	consumer := make(channelConsumer, 1)
	client, err := jobs.NewClient(jobs.Deps{
		Pool: d.Pool, Logger: logger, Dispatcher: events.NewDispatcher(d.Pool, consumer),
		Idempotency: idempotency.NewStore(d.Pool, logger),
	}, jobs.Options{Work: true, MaxWorkers: 5, SoftStopTimeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.Background()) })

	outbox := events.NewOutbox(client)
	var id uuid.UUID
	err = db.WithOrgTx(ctx, d.Pool, res.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		id, err = outbox.Emit(ctx, tx, "campaign.started", map[string]string{"campaign_id": "c1"})
		return err
	})
	require.NoError(t, err)

	select {
	case ev := <-consumer:
		require.Equal(t, id, ev.ID)
		require.Equal(t, "campaign.started", ev.Type)
	case <-time.After(15 * time.Second):
		t.Fatal("the event was not dispatched")
	}

	require.Eventually(t, func() bool {
		var beats, stale, swept, old int
		_ = owner.QueryRow(ctx, "SELECT count(*) FROM system_heartbeats WHERE name = $1", heartbeat.Scheduler).Scan(&beats)
		_ = owner.QueryRow(ctx, "SELECT count(*) FROM idempotency_keys WHERE key = 'stale'").Scan(&stale)
		_ = owner.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'credential_sweep' AND state = 'completed'").Scan(&swept)
		_ = owner.QueryRow(ctx, "SELECT count(*) FROM event_outbox WHERE data->>'age' = '8'").Scan(&old)
		return beats == 1 && stale == 0 && swept == 1 && old == 0
	}, 15*time.Second, 50*time.Millisecond)
	var endpoints []string
	rows, err := owner.Query(ctx, "SELECT endpoint FROM api_key_usage_logs ORDER BY endpoint")
	require.NoError(t, err)
	endpoints, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"/recent"}, endpoints, "request logs past retention are swept")
	var recent int
	require.NoError(t, owner.QueryRow(ctx, "SELECT count(*) FROM event_outbox WHERE data->>'age' = '6'").Scan(&recent))
	require.Equal(t, 1, recent, "the outbox prune keeps events younger than a week")
}

func TestInsertOnlyClientRefusesUnknownKinds(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	client, err := jobs.NewClient(jobs.Deps{Pool: d.Pool, Logger: logger, Dispatcher: events.NewDispatcher(d.Pool),
		Idempotency: idempotency.NewStore(d.Pool, logger)}, jobs.Options{})
	require.NoError(t, err)
	_, err = client.Insert(context.Background(), unknownArgs{}, nil)
	require.Error(t, err)
	_, err = client.Insert(context.Background(), jobs.HeartbeatArgs{}, nil)
	require.NoError(t, err, "registered kinds insert from API-only processes")
}

type unknownArgs struct{}

func (unknownArgs) Kind() string { return "not_registered" }
