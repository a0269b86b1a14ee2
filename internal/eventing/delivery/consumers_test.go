package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/eventing/realtime"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
	"github.com/outflowhq/outflow/jobs"
	"github.com/outflowhq/outflow/oauth"
)

// flakyRealtime is the real realtime consumer, failing its first call after it has published its notice: the
// notice must then roll back with the failed transaction.
type flakyRealtime struct {
	*realtime.Notifier
	calls atomic.Int32
}

func (f *flakyRealtime) Consume(ctx context.Context, tx pgx.Tx, ev events.Event) error {
	if err := f.Notifier.Consume(ctx, tx, ev); err != nil {
		return err
	}
	if f.calls.Add(1) == 1 {
		return errors.New("the realtime gateway's database is restarting")
	}
	return nil
}

// notices listens on the realtime channel from a connection of its own.
type notices struct{ conn *pgx.Conn }

func listen(t *testing.T, b *bundle) *notices {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, b.db.Pool.Config().ConnConfig.Copy())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	_, err = conn.Exec(ctx, "LISTEN "+realtime.Channel)
	require.NoError(t, err)
	return &notices{conn: conn}
}

// count publishes a marker notice and reads every notice up to it (Postgres delivers notices in commit
// order, so all those committed before are read), returning how many announced event id.
func (n *notices) count(t *testing.T, b *bundle, id uuid.UUID) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	marker := "marker-" + uuid.NewString()
	_, err := b.owner.Exec(ctx, "SELECT pg_notify($1, $2)", realtime.Channel, marker)
	require.NoError(t, err)
	seen := 0
	for {
		msg, err := n.conn.WaitForNotification(ctx)
		require.NoError(t, err)
		if msg.Payload == marker {
			return seen
		}
		var notice struct {
			ID uuid.UUID `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(msg.Payload), &notice))
		if notice.ID == id {
			seen++
		}
	}
}

// record commits one event to the outbox, as a write does, without dispatching it.
func (b *bundle) record(t *testing.T, typ events.Type, data any) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, db.WithOrgTx(context.Background(), b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		id, err = b.outbox.Emit(ctx, tx, typ, data)
		return err
	}))
	return id
}

// The test: the realtime consumer fails once. The webhook consumer, which succeeded in the same
// attempt, keeps its delivery, which is made; the retry runs the realtime consumer alone. The receiver gets
// the event exactly once and the gateway hears of it exactly once.
func TestARealtimeFailureDoesNotDeliverTheWebhookTwice(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, nil)
	_, secret := b.addEndpoint(t, endpoint{url: rcv.URL()})
	rcv.accept(secret)
	heard := listen(t, b)
	flaky := &flakyRealtime{Notifier: realtime.NewNotifier()}
	// The production order (cmd/outflow/app): the realtime consumer first, then the webhooks.
	d := events.NewDispatcher(b.db.Pool, flaky, delivery.NewConsumer(b.jobs, delivery.ConsumerOptions{Now: b.clock.Now}))
	ctx := context.Background()
	id := b.record(t, events.ContactCreated, map[string]any{"contact_email": "lead@x.example"})
	args := events.DispatchArgs{OrganizationID: b.org, EventID: id}

	require.ErrorContains(t, d.Dispatch(ctx, args), "the realtime gateway's database is restarting")
	require.Zero(t, heard.count(t, b, id), "the failed attempt's notice rolled back")
	require.Len(t, b.deliveries(t), 1, "the webhook consumer's work committed on its own")
	require.Equal(t, 1, b.runDue(t))
	require.Len(t, rcv.Hits(), 1)

	require.NoError(t, d.Dispatch(ctx, args))
	require.EqualValues(t, 2, flaky.calls.Load())
	require.Zero(t, b.runDue(t), "the retry made no new delivery")
	hits := rcv.Hits()
	require.Len(t, hits, 1)
	require.Equal(t, id.String(), hits[0].EventID)
	rcv.requireClean(t)
	ds := b.deliveries(t)
	require.Len(t, ds, 1)
	require.Equal(t, "delivered", ds[0].Status)
	require.Equal(t, 1, heard.count(t, b, id))
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM event_consumer_acks WHERE event_id = $1", id))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM event_outbox WHERE id = $1 AND dispatched_at IS NOT NULL", id))
}

// immediately retries a failed job at once instead of after River's backoff.
type immediately struct{}

func (immediately) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

// The same through the worker process as jobs.NewClient builds it: River's retry of the failed dispatch runs
// the realtime consumer alone, and the webhook attempt job delivers the event once.
func TestARetriedDispatchJobDeliversTheWebhookOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, nil)
	_, secret := b.addEndpoint(t, endpoint{url: rcv.URL()})
	rcv.accept(secret)
	heard := listen(t, b)
	flaky := &flakyRealtime{Notifier: realtime.NewNotifier()}
	logger := slog.New(slog.DiscardHandler)
	client, err := jobs.NewClient(jobs.Deps{
		Pool: b.db.Pool, Logger: logger,
		Dispatcher: events.NewDispatcher(b.db.Pool, flaky, delivery.NewConsumer(b.jobs, delivery.ConsumerOptions{})),
		Webhooks: delivery.NewDeliverer(b.db.Pool, delivery.Options{Keyring: b.keyring, Apps: oauth.WebhookApps{Keyring: b.keyring},
			Jobs: b.jobs, Egress: egress.Options{AllowPrivate: true}}),
		Idempotency:   idempotency.NewStore(b.db.Pool, logger),
		Notifications: notify.NewDeliverer(b.db.Pool, nil, notify.LogPusher{Logger: logger}, ""),
	}, jobs.Options{Work: true, MaxWorkers: 5, SoftStopTimeout: time.Second, RetryPolicy: immediately{}})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.Background()) })

	id := b.record(t, events.ContactCreated, map[string]any{"contact_email": "lead@x.example"})
	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(*) FROM river_job WHERE kind IN ('event_dispatch', 'webhook_attempt') AND state <> 'completed'`) == 0 &&
			b.count(t, "SELECT count(*) FROM event_outbox WHERE id = $1 AND dispatched_at IS NOT NULL", id) == 1 &&
			b.count(t, "SELECT count(*) FROM webhook_deliveries WHERE status = 'delivered'") == 1
	}, 30*time.Second, 20*time.Millisecond)

	require.Equal(t, 2, b.count(t, "SELECT attempt FROM river_job WHERE kind = 'event_dispatch'"), "the dispatch failed once")
	require.EqualValues(t, 2, flaky.calls.Load())
	require.Len(t, rcv.Hits(), 1)
	rcv.requireClean(t)
	require.Len(t, b.deliveries(t), 1)
	require.Equal(t, 1, heard.count(t, b, id))
}
