package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/eventing/realtime"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
	"github.com/outflowhq/outflow/jobs"
	"github.com/outflowhq/outflow/oauth"
	"github.com/outflowhq/outflow/webhook"
)

// benchReceiver is the local receiver both sides of the benchmark post to: it reads the body, checks the
// signature and notes when each event first arrived.
type benchReceiver struct {
	srv    *httptest.Server
	secret string
	mu     sync.Mutex
	first  map[string]time.Time
	done   chan struct{}
	want   int
}

func newBenchReceiver(b *testing.B, secret string) *benchReceiver {
	r := &benchReceiver{secret: secret, first: map[string]time.Time{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(req.Body)
		if webhook.VerifySignature(r.secret, req.Header.Get(webhook.SignatureHeader), body, 0) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id := req.Header.Get(webhook.EventIDHeader)
		r.mu.Lock()
		if _, seen := r.first[id]; !seen {
			r.first[id] = at
			if r.done != nil && len(r.first) == r.want {
				close(r.done)
			}
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(r.srv.Close)
	return r
}

// expect resets the receiver to wait for n new events.
func (r *benchReceiver) expect(n int) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.first = map[string]time.Time{}
	r.want = n
	r.done = make(chan struct{})
	return r.done
}

// benchPipeline is the production pipeline with the rate limits lifted: outbox, dispatch job, the consumers
// of cmd/outflow/app (realtime, then webhooks, each acknowledging in its own transaction), attempt jobs on the
// webhooks queue, the deliverer with the egress client, over one worker process's River client as
// jobs.NewClient builds it.
type benchPipeline struct {
	*bundle
	rcv    *benchReceiver
	client *river.Client[pgx.Tx]
}

func newBenchPipeline(b *testing.B) *benchPipeline {
	lifted := delivery.Limits{EndpointPerMinute: 1 << 30, OrgEventTypePerMinute: 1 << 30}
	bd := setup(b, func(o *setupOpts) { o.limits = lifted })
	id, secret := bd.addEndpoint(b, endpoint{url: "http://127.0.0.1:1/"})
	rcv := newBenchReceiver(b, secret)
	err := db.WithOrgTx(context.Background(), bd.db.Pool, bd.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE webhook_endpoints SET url = $3 WHERE organization_id = $1 AND id = $2", bd.org, id, rcv.srv.URL+"/hook")
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	consumer := delivery.NewConsumer(bd.jobs, delivery.ConsumerOptions{Limits: lifted})
	deliverer := delivery.NewDeliverer(bd.db.Pool, delivery.Options{Keyring: bd.keyring, Apps: oauth.WebhookApps{Keyring: bd.keyring}, Jobs: bd.jobs, Egress: egress.Options{AllowPrivate: true}})
	client, err := jobs.NewClient(jobs.Deps{
		Pool: bd.db.Pool, Logger: logger, Dispatcher: events.NewDispatcher(bd.db.Pool, realtime.NewNotifier(), consumer), Webhooks: deliverer,
		Idempotency: idempotency.NewStore(bd.db.Pool, logger), Notifications: notify.NewDeliverer(bd.db.Pool, nil, notify.LogPusher{Logger: logger}, ""),
	}, jobs.Options{Work: true, MaxWorkers: 50, SoftStopTimeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	return &benchPipeline{bundle: bd, rcv: rcv, client: client}
}

// wait blocks until the receiver has every expected event, failing after timeout.
func (p *benchPipeline) wait(b *testing.B, done <-chan struct{}, n int, timeout time.Duration) {
	select {
	case <-done:
	case <-time.After(timeout):
		p.rcv.mu.Lock()
		got := len(p.rcv.first)
		p.rcv.mu.Unlock()
		b.Fatalf("%d of %d events delivered", got, n)
	}
}

// dispatched waits until the outbox has no event left to dispatch.
func (p *benchPipeline) dispatched(b *testing.B) {
	for deadline := time.Now().Add(2 * time.Minute); ; {
		var left int
		if err := p.owner.QueryRow(context.Background(), "SELECT count(*) FROM event_outbox WHERE dispatched_at IS NULL").Scan(&left); err != nil {
			b.Fatal(err)
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d events not dispatched", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// emit commits n events, batch per transaction, and returns each event's commit time.
func (p *benchPipeline) emit(b *testing.B, n, batch int, pace time.Duration) map[string]time.Time {
	committed := make(map[string]time.Time, n)
	for sent := 0; sent < n; {
		k := min(batch, n-sent)
		ids := make([]uuid.UUID, 0, k)
		err := db.WithOrgTx(context.Background(), p.db.Pool, p.org, func(ctx context.Context, tx pgx.Tx) error {
			for i := range k {
				id, err := p.outbox.Emit(ctx, tx, events.ContactCreated, map[string]any{"contact_email": "lead@x.example", "n": sent + i})
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		at := time.Now()
		for _, id := range ids {
			committed[id.String()] = at
		}
		sent += k
		if pace > 0 {
			time.Sleep(pace)
		}
	}
	return committed
}

// latencies reports the p50 and p99 from event commit to first delivery attempt, in milliseconds.
func (p *benchPipeline) latencies(b *testing.B, committed map[string]time.Time) {
	p.rcv.mu.Lock()
	defer p.rcv.mu.Unlock()
	var ms []float64
	for id, at := range committed {
		if got, ok := p.rcv.first[id]; ok {
			ms = append(ms, float64(got.Sub(at).Microseconds())/1000)
		}
	}
	if len(ms) == 0 {
		return
	}
	slices.Sort(ms)
	b.ReportMetric(ms[len(ms)/2], "p50-commit-to-attempt-ms")
	b.ReportMetric(ms[min(len(ms)-1, len(ms)*99/100)], "p99-commit-to-attempt-ms")
}

// BenchmarkDelivery compares the delivery engine with a loop of signed POSTs of the same kind of payload to the
// same local receiver. outflow times deliveries already recorded by the event consumer, each with its attempt
// job, from the moment the webhooks queue starts working them until the receiver has them all: River fetches
// the jobs, each attempt claims its delivery in a transaction, builds the body from the outbox, signs it,
// checks the URL, POSTs through the egress client and records the answer in a second transaction.
// BenchmarkDeliveryEndToEnd adds the outbox and the dispatch in front.
func BenchmarkDelivery(b *testing.B) {
	p := newBenchPipeline(b)
	b.Run("baseline", func(b *testing.B) {
		client := &http.Client{}
		for b.Loop() {
			body, _ := json.Marshal(map[string]any{"id": uuid.New(), "event_type": "contact.created", "organization_id": p.org,
				"created_at": time.Now().UTC(), "data": map[string]any{"contact_email": "lead@x.example"}})
			req, _ := http.NewRequest(http.MethodPost, p.rcv.srv.URL+"/hook", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(webhook.SignatureHeader, webhook.Sign(p.rcv.secret, time.Now(), body))
			req.Header.Set(webhook.EventIDHeader, uuid.NewString())
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				b.Fatal(resp.Status)
			}
		}
	})
	b.Run("outflow", func(b *testing.B) {
		b.StopTimer()
		ctx := context.Background()
		n := b.N
		if err := p.client.QueuePause(ctx, delivery.QueueName, nil); err != nil {
			b.Fatal(err)
		}
		done := p.rcv.expect(n)
		p.emit(b, n, 50, 0)
		p.dispatched(b)
		start := time.Now()
		b.StartTimer()
		if err := p.client.QueueResume(ctx, delivery.QueueName, nil); err != nil {
			b.Fatal(err)
		}
		p.wait(b, done, n, time.Minute+time.Duration(n)*10*time.Millisecond)
		b.StopTimer()
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "deliveries/s")
	})
}

// BenchmarkDeliveryEndToEnd floods the whole pipeline with at least 2,000 events committed to the outbox (50
// per transaction) and waits until the receiver has them all, with the dispatch and attempt jobs running
// meanwhile. It reports deliveries per second and ns per delivery (ns/op is per benchmark iteration, which
// here may be fewer than the events sent), and the p50 and p99 from event commit to first delivery attempt
// under that load.
func BenchmarkDeliveryEndToEnd(b *testing.B) {
	p := newBenchPipeline(b)
	n := max(b.N, 2000)
	done := p.rcv.expect(n)
	start := time.Now()
	committed := p.emit(b, n, 50, 0)
	p.wait(b, done, n, time.Minute+time.Duration(n)*10*time.Millisecond)
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(n)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(n), "ns/delivery")
	p.latencies(b, committed)
}

// BenchmarkDeliveryLatency reports the p50 and p99 from event commit to first delivery attempt when events
// come one per transaction at a steady pace (100 a second) instead of a flood.
func BenchmarkDeliveryLatency(b *testing.B) {
	p := newBenchPipeline(b)
	n := max(b.N, 300)
	done := p.rcv.expect(n)
	committed := p.emit(b, n, 1, 10*time.Millisecond)
	p.wait(b, done, n, time.Minute)
	b.StopTimer()
	p.latencies(b, committed)
}

// BenchmarkDispatch compares one event's dispatch to the production consumers (realtime, then webhooks to one
// endpoint) with the single transaction it was before consumers acknowledged events on their own: baseline
// locks and reads the event, runs both consumers and marks the event dispatched in one transaction, as the
// dispatcher did; outflow is Dispatcher.Dispatch, a transaction per consumer with its acknowledgement.
func BenchmarkDispatch(b *testing.B) {
	lifted := delivery.Limits{EndpointPerMinute: 1 << 30, OrgEventTypePerMinute: 1 << 30}
	bd := setup(b, func(o *setupOpts) { o.limits = lifted })
	bd.addEndpoint(b, endpoint{url: "http://127.0.0.1:1/"})
	consumers := []events.Consumer{realtime.NewNotifier(), delivery.NewConsumer(bd.jobs, delivery.ConsumerOptions{Limits: lifted})}
	ctx := context.Background()
	record := func(b *testing.B, n int) []uuid.UUID {
		ids := make([]uuid.UUID, 0, n)
		for len(ids) < n {
			err := db.WithOrgTx(ctx, bd.db.Pool, bd.org, func(ctx context.Context, tx pgx.Tx) error {
				for range min(100, n-len(ids)) {
					id, err := bd.outbox.Emit(ctx, tx, events.ContactCreated, map[string]any{"contact_email": "lead@x.example"})
					if err != nil {
						return err
					}
					ids = append(ids, id)
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		return ids
	}
	b.Run("baseline", func(b *testing.B) {
		ids := record(b, b.N)
		b.ResetTimer()
		for _, id := range ids {
			err := db.WithOrgTx(ctx, bd.db.Pool, bd.org, func(ctx context.Context, tx pgx.Tx) error {
				ev := events.Event{OrganizationID: bd.org}
				if err := tx.QueryRow(ctx, `SELECT id, event_type, data, created_at FROM event_outbox
					WHERE organization_id = $1 AND id = $2 FOR UPDATE`, bd.org, id).Scan(&ev.ID, &ev.Type, &ev.Data, &ev.CreatedAt); err != nil {
					return err
				}
				for _, c := range consumers {
					if err := c.Consume(ctx, tx, ev); err != nil {
						return err
					}
				}
				_, err := tx.Exec(ctx, "UPDATE event_outbox SET dispatched_at = now() WHERE organization_id = $1 AND id = $2", bd.org, id)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("outflow", func(b *testing.B) {
		ids := record(b, b.N)
		d := events.NewDispatcher(bd.db.Pool, consumers...)
		b.ResetTimer()
		for _, id := range ids {
			if err := d.Dispatch(ctx, events.DispatchArgs{OrganizationID: bd.org, EventID: id}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
