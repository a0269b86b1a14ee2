package delivery_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/oauth"
)

func TestBackoffDoublesFromThirtySecondsCappedAtAnHour(t *testing.T) {
	t.Parallel()
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour, time.Hour}
	for i, w := range want {
		require.Equal(t, w, delivery.Backoff(i+1), "after attempt %d", i+1)
	}
}

// A receiver that is down for 30 simulated minutes gets every event once it is back, each within 8 attempts,
// and every attempt is signed.
func TestReceiverDownThirtyMinutesGetsEveryEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	start := b.clock.Now()
	up := start.Add(30 * time.Minute)
	rcv := newReceiver(t, func(hit) int {
		if b.clock.Now().Before(up) {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	_, secret := b.addEndpoint(t, endpoint{url: rcv.URL()})
	rcv.accept(secret)

	// Events keep coming during the outage: five at the start, then one every five minutes.
	var sent []uuid.UUID
	for i := range 5 {
		sent = append(sent, b.emit(t, events.ContactCreated, map[string]any{"contact_email": "c" + string(rune('a'+i)) + "@x.example"}))
	}
	nextEmit := start.Add(5 * time.Minute)
	for b.clock.Now().Before(start.Add(3 * time.Hour)) {
		b.runDue(t)
		if !b.clock.Now().Before(nextEmit) && nextEmit.Before(up) {
			sent = append(sent, b.emit(t, events.ContactCreated, map[string]any{"n": len(sent)}))
			nextEmit = nextEmit.Add(5 * time.Minute)
			continue
		}
		next, ok := b.nextDue(t)
		if !ok {
			break
		}
		if nextEmit.Before(up) && nextEmit.Before(next) {
			next = nextEmit
		}
		b.clock.Set(next)
	}

	rcv.requireClean(t)
	delivered := map[string]int{}
	attempts := map[string]int{}
	for _, h := range rcv.Hits() {
		attempts[h.EventID]++
		if h.Status == http.StatusOK {
			delivered[h.EventID]++
		}
	}
	require.Len(t, sent, 10)
	for _, id := range sent {
		require.Equal(t, 1, delivered[id.String()], "event %s delivered once", id)
		require.LessOrEqual(t, attempts[id.String()], delivery.MaxAttempts)
	}
	for _, d := range b.deliveries(t) {
		require.Equal(t, "delivered", d.Status)
		require.LessOrEqual(t, d.AttemptCount, delivery.MaxAttempts)
	}
	// The first events needed the whole schedule up to the 32-minute wait: 7 attempts.
	require.Equal(t, 7, attempts[sent[0].String()])
	// The endpoint is healthy again.
	require.Equal(t, 0, b.count(t, "SELECT consecutive_failures FROM webhook_endpoints"))
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM webhook_endpoints WHERE failing_since IS NOT NULL OR last_success_at IS NULL"))
}

// The waits between attempts follow the schedule exactly, and the 8th failure abandons the delivery with the
// last answer kept.
func TestBackoffScheduleThenAbandoned(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, func(hit) int { return http.StatusInternalServerError })
	_, secret := b.addEndpoint(t, endpoint{url: rcv.URL()})
	rcv.accept(secret)
	b.emit(t, events.ContactCreated, map[string]any{"contact_email": "a@x.example"})

	var at []time.Time
	for {
		if n := b.runDue(t); n > 0 {
			at = append(at, b.clock.Now())
		}
		next, ok := b.nextDue(t)
		if !ok {
			break
		}
		b.clock.Set(next)
	}
	require.Len(t, at, delivery.MaxAttempts)
	for i := 1; i < len(at); i++ {
		require.Equal(t, delivery.Backoff(i), at[i].Sub(at[i-1]), "wait after attempt %d", i)
	}
	require.Len(t, rcv.Hits(), delivery.MaxAttempts)
	rcv.requireClean(t)
	ds := b.deliveries(t)
	require.Len(t, ds, 1)
	d := ds[0]
	require.Equal(t, "abandoned", d.Status)
	require.Equal(t, delivery.MaxAttempts, d.AttemptCount)
	require.Equal(t, 500, *d.Response)
	require.Equal(t, "status Internal Server Error", *d.Excerpt)
	require.Equal(t, "HTTP 500", *d.Reason)
	// Each failed attempt with attempts left scheduled the next one's job for the moment it fell due.
	rows, err := b.owner.Query(context.Background(), "SELECT scheduled_at FROM river_job WHERE kind = 'webhook_attempt' ORDER BY id")
	require.NoError(t, err)
	scheduled, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	require.NoError(t, err)
	require.Len(t, scheduled, delivery.MaxAttempts)
	for i := 1; i < len(at); i++ {
		require.WithinDuration(t, at[i], scheduled[i], time.Millisecond)
	}
}

func TestRedirectIsAFailureAndTheExcerptIsBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var long atomic.Bool
	srv := newReceiver(t, nil)
	redirect := http.NewServeMux()
	redirect.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		if long.Load() {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(strings.Repeat("é", 2000)))
			return
		}
		http.Redirect(w, r, srv.URL(), http.StatusFound)
	})
	other := httptest.NewServer(redirect)
	t.Cleanup(other.Close)
	_, secret := b.addEndpoint(t, endpoint{url: other.URL + "/hook"})
	srv.accept(secret)
	b.emit(t, events.ContactCreated, map[string]any{})
	b.runDue(t)
	d := b.deliveries(t)[0]
	require.Equal(t, "failed", d.Status)
	require.Equal(t, 302, *d.Response)
	require.Equal(t, "redirect (HTTP 302) not followed", *d.Reason)
	require.Empty(t, srv.Hits(), "the redirect was not followed")

	long.Store(true)
	b.clock.Advance(delivery.Backoff(1))
	b.runDue(t)
	d = b.deliveries(t)[0]
	require.Equal(t, 400, *d.Response)
	require.Equal(t, strings.Repeat("é", 512), *d.Excerpt, "the first 1024 bytes")
}

// A delivery created before a rotation keeps signing with the old secret until it settles; one created after
// signs with the new one.
func TestSecretRotationKeepsInFlightDeliveriesVerifiable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fail := atomic.Bool{}
	fail.Store(true)
	rcv := newReceiver(t, func(hit) int {
		if fail.Load() {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	id, oldSecret := b.addEndpoint(t, endpoint{url: rcv.URL()})
	rcv.accept(oldSecret)
	before := b.emit(t, events.ContactCreated, map[string]any{})
	b.runDue(t) // fails: retried later

	newSecret := b.rotate(t, id)
	rcv.accept(newSecret)
	after := b.emit(t, events.ContactCreated, map[string]any{})
	fail.Store(false)
	b.clock.Advance(time.Minute)
	b.runDue(t)

	rcv.requireClean(t)
	used := map[string][]string{}
	for _, h := range rcv.Hits() {
		used[h.EventID] = append(used[h.EventID], h.Secret)
	}
	require.Equal(t, []string{oldSecret, oldSecret}, used[before.String()])
	require.Equal(t, []string{newSecret}, used[after.String()])
}

// Empty event_types means every non-firehose event; a firehose event goes only where it is listed; unverified
// and disabled endpoints get nothing.
func TestSubscriptionsAndFirehoseOptIn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, nil)
	all, _ := b.addEndpoint(t, endpoint{url: rcv.URL()})
	firehose, _ := b.addEndpoint(t, endpoint{url: rcv.URL(), eventTypes: []string{"campaign.email_sent"}})
	contacts, _ := b.addEndpoint(t, endpoint{url: rcv.URL(), eventTypes: []string{"contact.created", "campaign.email_sent", "crm.deal_created"}})
	unverified, _ := b.addEndpoint(t, endpoint{url: rcv.URL(), unverified: true})
	disabled, _ := b.addEndpoint(t, endpoint{url: rcv.URL(), disabled: true})

	sent := b.emit(t, events.CampaignEmailSent, map[string]any{})
	created := b.emit(t, events.ContactCreated, map[string]any{})
	deleted := b.emit(t, events.ContactDeleted, map[string]any{})

	got := map[uuid.UUID][]uuid.UUID{}
	for _, d := range b.deliveries(t) {
		got[d.EndpointID] = append(got[d.EndpointID], d.EventID)
	}
	require.ElementsMatch(t, []uuid.UUID{created, deleted}, got[all])
	require.ElementsMatch(t, []uuid.UUID{sent}, got[firehose])
	require.ElementsMatch(t, []uuid.UUID{sent, created}, got[contacts])
	require.Empty(t, got[unverified])
	require.Empty(t, got[disabled])
	// Each delivery has its first attempt's job, enqueued with it.
	require.Equal(t, 5, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'webhook_attempt' AND queue = 'webhooks'"))

	// A second dispatch of the same event (a retried dispatch job after its transaction committed) adds nothing.
	err := db.WithOrgTx(context.Background(), b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE event_outbox SET dispatched_at = NULL WHERE organization_id = $1", b.org)
		return err
	})
	require.NoError(t, err)
	require.NoError(t, b.dispatcher.Dispatch(context.Background(), events.DispatchArgs{OrganizationID: b.org, EventID: created}))
	require.Len(t, b.deliveries(t), 5)
}

// The per-endpoint rate limit and the per-organization per-event-type throttle suppress events beyond them,
// counted per window; the next window starts afresh.
func TestThrottleDropsAreRecordedPerWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *setupOpts) { o.limits = delivery.Limits{EndpointPerMinute: 3, OrgEventTypePerMinute: 5} })
	rcv := newReceiver(t, nil)
	ep, _ := b.addEndpoint(t, endpoint{url: rcv.URL()})
	b.clock.Advance(10 * time.Second)
	for range 7 {
		b.emit(t, events.ContactCreated, map[string]any{})
	}
	require.Len(t, b.deliveries(t), 3)
	window := b.clock.Now().Truncate(time.Minute)
	type drop struct {
		Endpoint     uuid.NullUUID
		Reason       string
		Dropped      int
		Start, End   time.Time
		EventType    string
		LastDroppedA time.Time
	}
	rows, err := b.owner.Query(context.Background(),
		"SELECT endpoint_id, reason, dropped, window_start, window_end, event_type, last_dropped_at FROM webhook_throttle_drops ORDER BY reason")
	require.NoError(t, err)
	drops, err := pgx.CollectRows(rows, pgx.RowToStructByPos[drop])
	require.NoError(t, err)
	require.Len(t, drops, 2)
	require.Equal(t, uuid.NullUUID{UUID: ep, Valid: true}, drops[0].Endpoint)
	require.Equal(t, delivery.ReasonEndpointRateLimit, drops[0].Reason)
	require.Equal(t, 2, drops[0].Dropped, "events 4 and 5: within the type throttle, over the endpoint's limit")
	require.False(t, drops[1].Endpoint.Valid)
	require.Equal(t, delivery.ReasonOrgEventTypeThrottle, drops[1].Reason)
	require.Equal(t, 2, drops[1].Dropped, "events 6 and 7: over the type throttle")
	for _, d := range drops {
		require.True(t, d.Start.Equal(window))
		require.True(t, d.End.Equal(window.Add(time.Minute)))
		require.Equal(t, "contact.created", d.EventType)
	}

	// Another type has its own throttle but shares the endpoint's limit; the next minute starts afresh.
	b.emit(t, events.ContactDeleted, map[string]any{})
	require.Len(t, b.deliveries(t), 3)
	b.clock.Advance(time.Minute)
	b.emit(t, events.ContactCreated, map[string]any{})
	require.Len(t, b.deliveries(t), 4)
	require.Equal(t, 3, b.count(t, "SELECT count(*) FROM webhook_throttle_drops"))
}

// An endpoint failing every attempt for 24 hours (and at least 20 in a row) is disabled, its owners and admins
// are told, and it gets nothing more; a day of failures short of that leaves it enabled.
func TestEndpointDisabledAfterASustainedDayOfFailures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, func(hit) int { return http.StatusServiceUnavailable })
	ep, secret := b.addEndpoint(t, endpoint{url: rcv.URL()})
	rcv.accept(secret)
	start := b.clock.Now()

	// One event an hour; run every attempt as it falls due.
	nextEmit := start
	var disabledAt time.Time
	hitsAtDisable, emitted, emittedAtDisable := 0, 0, 0
	for b.clock.Now().Before(start.Add(26 * time.Hour)) {
		if !b.clock.Now().Before(nextEmit) {
			b.emit(t, events.ContactCreated, map[string]any{})
			emitted++
			nextEmit = nextEmit.Add(time.Hour)
		}
		b.runDue(t)
		if disabledAt.IsZero() && b.count(t, "SELECT count(*) FROM webhook_endpoints WHERE NOT enabled") == 1 {
			disabledAt = b.clock.Now()
			hitsAtDisable, emittedAtDisable = len(rcv.Hits()), emitted
		}
		if disabledAt.IsZero() && b.clock.Now().Before(start.Add(23*time.Hour)) {
			require.Equal(t, 0, b.count(t, "SELECT count(*) FROM notifications"))
		}
		next, ok := b.nextDue(t)
		if !ok || nextEmit.Before(next) {
			next = nextEmit
		}
		b.clock.Set(next)
	}
	rcv.requireClean(t)
	require.False(t, disabledAt.IsZero(), "the endpoint was disabled")
	require.GreaterOrEqual(t, disabledAt.Sub(start), delivery.DisableAfter)
	require.Less(t, disabledAt.Sub(start), delivery.DisableAfter+time.Hour)

	var reason string
	var failures int
	require.NoError(t, b.owner.QueryRow(context.Background(),
		"SELECT disabled_reason, consecutive_failures FROM webhook_endpoints WHERE id = $1", ep).Scan(&reason, &failures))
	require.Contains(t, reason, "Disabled automatically")
	require.GreaterOrEqual(t, failures, delivery.DisableMinFailures)
	var category, title string
	require.NoError(t, b.owner.QueryRow(context.Background(),
		"SELECT category, title FROM notifications WHERE user_id = $1", b.user).Scan(&category, &title))
	require.Equal(t, "health_worker_downtime", category)
	require.Contains(t, title, "webhook endpoint was disabled")

	// Nothing reached the receiver after the endpoint was disabled: leftover deliveries were abandoned, later
	// events got no delivery.
	require.Len(t, rcv.Hits(), hitsAtDisable)
	for _, d := range b.deliveries(t) {
		require.Contains(t, []string{"abandoned"}, d.Status)
	}
	require.Positive(t, b.count(t, "SELECT count(*) FROM webhook_deliveries WHERE error_reason = 'the endpoint is disabled'"))
	require.Greater(t, emitted, emittedAtDisable)
	require.Equal(t, emittedAtDisable, b.count(t, "SELECT count(*) FROM webhook_deliveries"), "no later event got a delivery")
}

// Two attempts racing for one delivery (two worker processes, or a duplicate job) make one request.
func TestConcurrentAttemptsDeliverOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := make(chan struct{})
	rcv := newReceiver(t, func(hit) int { <-release; return http.StatusOK })
	_, secret := b.addEndpoint(t, endpoint{url: rcv.URL()})
	rcv.accept(secret)
	b.emit(t, events.ContactCreated, map[string]any{})
	id := b.deliveries(t)[0].ID

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_, err := b.deliverer.Attempt(context.Background(), delivery.AttemptArgs{OrganizationID: b.org, DeliveryID: id})
			require.NoError(t, err)
		})
	}
	time.Sleep(200 * time.Millisecond)
	close(release)
	wg.Wait()
	require.Len(t, rcv.Hits(), 1)
	d := b.deliveries(t)[0]
	require.Equal(t, "delivered", d.Status)
	require.Equal(t, 1, d.AttemptCount)
}

// A process that died mid-attempt leaves the delivery in flight; once its lease runs out the sweep enqueues it
// again and the next attempt delivers it. An interrupted last attempt abandons the delivery.
func TestInterruptedAttemptIsRetriedAfterItsLease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, nil)
	_, secret := b.addEndpoint(t, endpoint{url: rcv.URL()})
	rcv.accept(secret)
	b.emit(t, events.ContactCreated, map[string]any{})
	b.emit(t, events.ContactDeleted, map[string]any{})
	ds := b.deliveries(t)
	crash := func(id uuid.UUID, attempts int) {
		err := db.WithOrgTx(context.Background(), b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = 'in_flight', attempt_count = $3, lease_until = $4
				WHERE organization_id = $1 AND id = $2`, b.org, id, attempts, b.clock.Now().Add(delivery.Lease))
			return err
		})
		require.NoError(t, err)
	}
	crash(ds[0].ID, 1)
	crash(ds[1].ID, delivery.MaxAttempts)

	// While the lease holds, an attempt leaves the delivery alone.
	wait, err := b.deliverer.Attempt(context.Background(), delivery.AttemptArgs{OrganizationID: b.org, DeliveryID: ds[0].ID})
	require.NoError(t, err)
	require.Zero(t, wait)
	require.Empty(t, rcv.Hits())

	b.clock.Advance(delivery.Lease + time.Second)
	jobsBefore := b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'webhook_attempt'")
	n, err := b.deliverer.Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, jobsBefore+2, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'webhook_attempt'"))
	for _, d := range ds {
		_, err := b.deliverer.Attempt(context.Background(), delivery.AttemptArgs{OrganizationID: b.org, DeliveryID: d.ID})
		require.NoError(t, err)
	}
	ds = b.deliveries(t)
	require.Equal(t, "delivered", ds[0].Status)
	require.Equal(t, 2, ds[0].AttemptCount)
	require.Equal(t, "abandoned", ds[1].Status)
	require.Contains(t, *ds[1].Reason, "interrupted")
	require.Len(t, rcv.Hits(), 1)
	rcv.requireClean(t)
}

// An OAuth app's managed endpoint gets the app's declared events that the organization's grant covers, signed
// with the app's secret; its host is checked against the app's allowed domains before every attempt.
func TestOAuthAppManagedEndpoint(t *testing.T) {
	t.Parallel()
	rcv, client := newTLSReceiver(t, nil)
	b := setup(t, func(o *setupOpts) {
		o.resolver = staticResolver{addr: net.IPv4(127, 0, 0, 1)}
		o.client = client
	})
	appID := uuid.New()
	appSecret := oauth.NewWebhookSecret()
	rcv.accept(appSecret)
	hookURL := "https://hooks.partner.example/hook"
	hash, err := bcrypt.GenerateFromPassword([]byte("s"), bcrypt.MinCost)
	require.NoError(t, err)
	owner := b.owner
	ctx := context.Background()
	_, err = owner.Exec(ctx, `INSERT INTO oauth_clients (id, organization_id, client_id, client_type, token_endpoint_auth_method,
		secret_hash, name, redirect_uris, grant_types, scopes, allowed_webhook_domains, webhook_url, webhook_events, webhook_secret_sealed)
		VALUES ($1, $2, 'ofc_test', 'confidential', 'client_secret_basic', $3, 'Partner CRM', '{https://crm.partner.example/cb}',
		'{authorization_code,refresh_token}', $4, '{.partner.example}', $5, $6, $7)`,
		appID, b.org, hash, int64(auth.ReadContacts|auth.ReadCampaigns|auth.ReadCRM), hookURL,
		[]string{"contact.created", "campaign.email_sent", "crm.deal_created", "campaign.started"},
		oauth.SealWebhookSecret(b.keyring, appID, appSecret))
	require.NoError(t, err)
	// The grant holds READ_CONTACTS and READ_CAMPAIGNS, not READ_CRM.
	_, err = owner.Exec(ctx, `INSERT INTO oauth_grants (organization_id, id, client_id, user_id, scopes) VALUES ($1, $2, $3, $4, $5)`,
		b.org, uuid.New(), appID, b.user, int64(auth.ReadContacts|auth.ReadCampaigns))
	require.NoError(t, err)
	managed, _ := b.addEndpoint(t, endpoint{url: hookURL, app: appID})

	created := b.emit(t, events.ContactCreated, map[string]any{})
	sent := b.emit(t, events.CampaignEmailSent, map[string]any{}) // firehose, declared by the app
	b.emit(t, events.CRMDealCreated, map[string]any{})            // declared, but READ_CRM not granted
	b.emit(t, events.ContactDeleted, map[string]any{})            // granted, not declared
	var got []uuid.UUID
	for _, d := range b.deliveries(t) {
		require.Equal(t, managed, d.EndpointID)
		got = append(got, d.EventID)
	}
	require.ElementsMatch(t, []uuid.UUID{created, sent}, got)
	b.runDue(t)
	rcv.requireClean(t)
	require.Len(t, rcv.Hits(), 2)
	for _, h := range rcv.Hits() {
		require.Equal(t, appSecret, h.Secret)
	}

	// The developer narrows the allowed domains: the next attempt is refused before any request.
	_, err = owner.Exec(ctx, `UPDATE oauth_clients SET allowed_webhook_domains = '{hooks.other.example}' WHERE id = $1`, appID)
	require.NoError(t, err)
	started := b.emit(t, events.CampaignStarted, map[string]any{})
	b.runDue(t)
	require.Len(t, rcv.Hits(), 2)
	for _, d := range b.deliveries(t) {
		if d.EventID == started {
			require.Equal(t, "failed", d.Status)
			require.Contains(t, *d.Reason, "allowed_webhook_domains")
		}
	}

	// A revoked grant stops deliveries.
	_, err = owner.Exec(ctx, `UPDATE oauth_grants SET revoked_at = now() WHERE client_id = $1`, appID)
	require.NoError(t, err)
	n := len(b.deliveries(t))
	b.emit(t, events.ContactCreated, map[string]any{})
	require.Len(t, b.deliveries(t), n)
}

// An endpoint with MaxInFlightPerEndpoint attempts hanging for over SlowAttempt gets no more until one ends;
// attempts that are merely running (a busy, healthy endpoint) never hold it back.
func TestSlowAttemptsBoundAnEndpointsWorkers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, nil)
	_, secret := b.addEndpoint(t, endpoint{url: rcv.URL()})
	rcv.accept(secret)
	for range delivery.MaxInFlightPerEndpoint + 1 {
		b.emit(t, events.ContactCreated, map[string]any{})
	}
	ds := b.deliveries(t)
	hold := func(started time.Time) {
		err := db.WithOrgTx(context.Background(), b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = 'in_flight', attempt_count = 1, last_attempt_at = $3,
				lease_until = $4 WHERE organization_id = $1 AND id <> $2`, b.org, ds[len(ds)-1].ID, started, b.clock.Now().Add(delivery.Lease))
			return err
		})
		require.NoError(t, err)
	}
	last := delivery.AttemptArgs{OrganizationID: b.org, DeliveryID: ds[len(ds)-1].ID}

	hold(b.clock.Now()) // just started: not slow
	wait, err := b.deliverer.Attempt(context.Background(), last)
	require.NoError(t, err)
	require.Zero(t, wait)
	require.Len(t, rcv.Hits(), 1)

	b.emit(t, events.ContactCreated, map[string]any{})
	ds = b.deliveries(t)
	last.DeliveryID = ds[len(ds)-1].ID
	hold(b.clock.Now().Add(-2 * delivery.SlowAttempt)) // hanging
	_, err = b.deliverer.Attempt(context.Background(), last)
	require.ErrorIs(t, err, delivery.ErrEndpointBusy)
	require.Len(t, rcv.Hits(), 1)
	require.Equal(t, "pending", b.deliveries(t)[len(ds)-1].Status)
	for n := range 6 {
		require.GreaterOrEqual(t, delivery.BusyWait(n), min(time.Second<<n, 8*time.Second))
		require.Less(t, delivery.BusyWait(n), 12*time.Second+1)
	}
}
