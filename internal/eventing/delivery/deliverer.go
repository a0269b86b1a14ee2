package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/webhook"
)

// Delivery settings. Part 1 fixes the timeout, the attempts, the backoff and the excerpt; the rest is ours.
const (
	// QueueName is the River queue of delivery attempts, apart from every other job so a backlog of slow
	// receivers never delays sends or event dispatch.
	QueueName = "webhooks"
	// QueueWorkers is how many attempts one worker process runs at once. Attempts mostly wait on the network.
	QueueWorkers = 128
	// MaxInFlightPerEndpoint bounds the slow attempts (in flight for over SlowAttempt) against one endpoint
	// at once, across worker processes: a receiver that hangs for the whole timeout holds at most a quarter of
	// a process's workers, and it takes four such receivers at once to hold them all. Attempts that finish
	// within SlowAttempt do not count, so a healthy receiver is never held back, however busy.
	MaxInFlightPerEndpoint = QueueWorkers / 4
	// SlowAttempt is how long an attempt runs before it counts against MaxInFlightPerEndpoint. Until then an
	// endpoint may get more attempts at once; the per-endpoint rate limit bounds how many arrive in that time.
	SlowAttempt = time.Second
	// RequestTimeout bounds one attempt's HTTP exchange (connect, TLS, headers, the excerpt).
	RequestTimeout = 15 * time.Second
	// MaxAttempts is a delivery's default attempt budget; the last failure abandons it.
	MaxAttempts = 8
	// BaseBackoff is the wait after the first failed attempt; it doubles per attempt up to MaxBackoff.
	BaseBackoff = 30 * time.Second
	// MaxBackoff caps the wait between attempts.
	MaxBackoff = time.Hour
	// ExcerptBytes is how much of a receiver's answer is kept.
	ExcerptBytes = 1024
	// Lease is how long a claimed attempt owns its delivery. It outlasts the attempt job's timeout, so only a
	// process that died mid-attempt lets it run out.
	Lease = time.Minute
	// DisableAfter and DisableMinFailures define "failing continuously over a sustained window": no success
	// for DisableAfter and at least DisableMinFailures failed attempts in a row disable the endpoint. With
	// the backoff above, one undeliverable event alone makes 8 attempts in about an hour; the count keeps a
	// quiet endpoint that failed twice a day apart from a dead one.
	DisableAfter       = 24 * time.Hour
	DisableMinFailures = 20
	// SweepInterval is how often stalled deliveries are looked for; StalledGrace is how long a due delivery
	// may wait for its job before the sweep enqueues another (a duplicate is harmless, the claim decides).
	SweepInterval = time.Minute
	StalledGrace  = 5 * time.Minute
	// DropRetention is how long throttle-drop records are kept.
	DropRetention = 30 * 24 * time.Hour

	// earlyTolerance: a job that runs up to this much before its delivery is due (clocks of the worker and
	// the database differ slightly) waits for it instead of ending.
	earlyTolerance = 5 * time.Second
	// drainBytes is how much more of an answer is read (and discarded) so the connection can be reused.
	drainBytes = 64 << 10
	// recordTimeout bounds recording an outcome, which happens even while the process shuts down: an attempt
	// that reached the receiver must not be left to be repeated.
	recordTimeout = 10 * time.Second
	sweepBatch    = 1000
)

// Backoff is the wait after the attempt-th failed attempt (1-based): 30 s doubling, capped at one hour.
func Backoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > 8 {
		return MaxBackoff
	}
	return min(BaseBackoff<<(attempt-1), MaxBackoff)
}

// AttemptArgs is the River job of one delivery attempt.
type AttemptArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	DeliveryID     uuid.UUID `json:"delivery_id"`
}

// Kind names the attempt job in River.
func (AttemptArgs) Kind() string { return "webhook_attempt" }

// InsertOpts puts attempts on their own queue. River's own retries cover infrastructure errors (the database
// unreachable); an answer from the receiver, good or bad, always ends the job.
func (AttemptArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueName, MaxAttempts: 10}
}

// SweepArgs is the periodic job that re-enqueues stalled deliveries and trims rate windows and old drop
// records.
type SweepArgs struct{}

// Kind names the sweep job in River.
func (SweepArgs) Kind() string { return "webhook_sweep" }

// InsertOpts retries a failed sweep a few times; a sweep is idempotent.
func (SweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3}
}

// AppRules are the OAuth server's rules for an app's managed endpoint, applied before every attempt and
// challenge: whether the URL still lies inside the app's allowed_webhook_domains (nil when it does; the error
// says why not) and the app's signing secret. Package oauth holds them (oauth.WebhookApps); it is a layer
// above this one, so the composition root passes them in.
type AppRules interface {
	CheckDeliveryURL(raw string, allowedDomains []string) error
	OpenWebhookSecret(appID uuid.UUID, sealed []byte) (string, error)
}

// Options configure a Deliverer.
type Options struct {
	// Keyring opens endpoint signing secrets.
	Keyring *seal.Keyring
	// Apps answers for OAuth apps' managed endpoints; required.
	Apps AppRules
	// Jobs (a River client, insert-only is enough) enqueues retries and notifications in the recording
	// transaction.
	Jobs Inserter
	// Egress checks each endpoint URL again before an attempt (and builds the client when Client is nil).
	Egress egress.Options
	// Client sends the requests; nil means egress.NewClient(Egress). Redirects are never followed whatever
	// the client says.
	Client *http.Client
	// Now is the clock of claims, leases, signatures and backoff; nil means time.Now.
	Now func() time.Time
	// Logger records what an attempt cannot put in the delivery row (a secret that does not open).
	Logger *slog.Logger
}

// Deliverer makes delivery attempts.
type Deliverer struct {
	pool     *pgxpool.Pool
	keyring  *seal.Keyring
	apps     AppRules
	jobs     Inserter
	notifier *notify.Notifier
	egress   egress.Options
	client   *http.Client
	now      func() time.Time
	logger   *slog.Logger
	queries  *dbq.Queries
}

// NewDeliverer builds the attempt side over the application pool. It panics without opts.Apps: a process that
// cannot check an app's endpoint must not start delivering.
func NewDeliverer(pool *pgxpool.Pool, opts Options) *Deliverer {
	if opts.Apps == nil {
		panic("delivery: Options.Apps is required")
	}
	d := &Deliverer{pool: pool, keyring: opts.Keyring, apps: opts.Apps, jobs: opts.Jobs, notifier: notify.NewNotifier(opts.Jobs),
		egress: opts.Egress, now: opts.Now, logger: opts.Logger, queries: dbq.New()}
	client := opts.Client
	if client == nil {
		client = egress.NewClient(opts.Egress)
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	// Keep as many idle connections per receiver as attempts may run against it, so a busy endpoint's
	// deliveries reuse connections instead of dialing (and handshaking) for most of them. Clone keeps the
	// transport's dialer, which is where the egress checks live.
	if t, ok := c.Transport.(*http.Transport); ok && t.MaxIdleConnsPerHost < MaxInFlightPerEndpoint {
		t = t.Clone()
		t.MaxIdleConnsPerHost = MaxInFlightPerEndpoint
		c.Transport = t
	}
	d.client = &c
	if d.now == nil {
		d.now = time.Now
	}
	if d.logger == nil {
		d.logger = slog.New(slog.DiscardHandler)
	}
	return d
}

// outcome is what one attempt came to.
type outcome struct {
	delivered bool
	// final abandons the delivery whatever attempts remain (its endpoint was disabled or lost verification).
	final bool
	// health makes the outcome count for the endpoint's health (the receiver, not our side, failed).
	health  bool
	status  *int32
	excerpt *string
	reason  string
}

// ErrEndpointBusy is Attempt's answer when the delivery's endpoint already has MaxInFlightPerEndpoint slow
// attempts running: nothing was attempted; try again after BusyWait.
var ErrEndpointBusy = errors.New("delivery: the endpoint has as many slow attempts in flight as it may")

// BusyWait is how long an attempt that found its endpoint busy for the n-th time in a row (from 0) waits:
// from 1 s, doubling, at most 8 s, with jitter so the waiting jobs do not return together. Busy means
// MaxInFlightPerEndpoint attempts have been hanging for over SlowAttempt; slots come free only as they time
// out.
func BusyWait(n int) time.Duration {
	d := 8 * time.Second
	if n < 3 {
		d = time.Second << n
	}
	return d + rand.N(d/2+1)
}

// claimed is a delivery one attempt owns, with what the attempt needs.
type claimed struct {
	org, id uuid.UUID
	row     dbq.WebhookDeliveryClaimRow
	app     *dbq.WebhookAppGetRow
}

// Attempt makes one attempt at a delivery: claim, POST, record. It returns a positive wait when the job should
// run again later without an attempt having been made (the delivery falls due in a moment) and
// ErrEndpointBusy when the endpoint has MaxInFlightPerEndpoint slow attempts running; an attempt that finds
// its delivery taken or settled does nothing.
func (d *Deliverer) Attempt(ctx context.Context, args AttemptArgs) (time.Duration, error) {
	c, wait, ok, err := d.claim(ctx, args)
	if err != nil || !ok {
		return wait, err
	}
	o := d.attempt(ctx, c)
	if ctx.Err() != nil {
		// The process is stopping and cut the attempt short: its outcome says nothing about the receiver. The
		// delivery stays in flight until its lease runs out, then the sweep or River's retry tries again.
		return 0, ctx.Err()
	}
	return 0, d.record(ctx, c, o)
}

// claim takes args' delivery for an attempt, or says why not.
func (d *Deliverer) claim(ctx context.Context, args AttemptArgs) (c claimed, wait time.Duration, ok bool, err error) {
	now := d.now()
	c = claimed{org: args.OrganizationID, id: args.DeliveryID}
	err = db.WithOrgTx(ctx, d.pool, args.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		c.row, err = d.queries.WebhookDeliveryClaim(ctx, tx, dbq.WebhookDeliveryClaimParams{
			OrganizationID: args.OrganizationID, ID: args.DeliveryID, Now: now, LeaseUntil: now.Add(Lease),
			MaxInFlight: MaxInFlightPerEndpoint, SlowBefore: now.Add(-SlowAttempt),
		})
		if errors.Is(err, pgx.ErrNoRows) {
			wait, err = d.missedTx(ctx, tx, args, now)
			return err
		}
		if err != nil {
			return fmt.Errorf("claim delivery: %w", err)
		}
		ok = true
		if c.row.OauthClientID.Valid {
			a, err := d.queries.WebhookAppGet(ctx, tx, c.row.OauthClientID.UUID)
			switch {
			case err == nil:
				c.app = &a
			case !errors.Is(err, pgx.ErrNoRows):
				return fmt.Errorf("load OAuth app: %w", err)
			}
		}
		return nil
	})
	return c, wait, ok, err
}

// missedTx decides what a job whose claim missed does.
func (d *Deliverer) missedTx(ctx context.Context, tx pgx.Tx, args AttemptArgs, now time.Time) (time.Duration, error) {
	st, err := d.queries.WebhookDeliveryState(ctx, tx, dbq.WebhookDeliveryStateParams{OrganizationID: args.OrganizationID, ID: args.DeliveryID})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil // deleted with its endpoint
	}
	if err != nil {
		return 0, fmt.Errorf("read delivery: %w", err)
	}
	if st.AttemptCount >= st.MaxAttempts {
		if st.Status == "in_flight" && st.LeaseUntil != nil && st.LeaseUntil.Before(now) {
			_, err := d.queries.WebhookDeliveryAbandonInterrupted(ctx, tx, dbq.WebhookDeliveryAbandonInterruptedParams{
				OrganizationID: args.OrganizationID, ID: args.DeliveryID, Now: now,
				Reason: "the last attempt was interrupted (its worker stopped mid-attempt)",
			})
			return 0, err
		}
		return 0, nil
	}
	switch st.Status {
	case "pending", "failed":
		if due := st.NextAttemptAt.Sub(now); due > 0 {
			if due <= earlyTolerance {
				return due, nil
			}
			return 0, nil // a duplicate job; the one scheduled for next_attempt_at will come
		}
		return 0, ErrEndpointBusy
	case "in_flight":
		if st.LeaseUntil != nil && st.LeaseUntil.Before(now) {
			return 0, ErrEndpointBusy // its lease ran out, but the endpoint is busy
		}
	}
	return 0, nil // in flight elsewhere, or settled
}

// attempt checks the target, signs and sends.
func (d *Deliverer) attempt(ctx context.Context, c claimed) outcome {
	r := c.row
	switch {
	case r.EventCreatedAt == nil:
		return outcome{final: true, reason: "the event is no longer available"}
	case !r.Enabled:
		return outcome{final: true, reason: "the endpoint is disabled"}
	case !r.Verified:
		return outcome{final: true, reason: "the endpoint is not verified"}
	}
	var secret string
	var err error
	if r.OauthClientID.Valid {
		if c.app == nil || c.app.WebhookUrl == "" {
			return outcome{final: true, reason: "the OAuth app no longer receives webhooks"}
		}
		if err := d.apps.CheckDeliveryURL(r.Url, c.app.AllowedWebhookDomains); err != nil {
			return outcome{reason: "refused: " + err.Error()}
		}
		secret, err = d.apps.OpenWebhookSecret(r.OauthClientID.UUID, c.app.WebhookSecretSealed)
	} else {
		sealed := r.SecretSealed
		// A delivery created before the latest rotation signs with the secret it started with.
		if r.SecretGeneration == r.EndpointSecretGeneration-1 && len(r.PreviousSecretSealed) > 0 {
			sealed = r.PreviousSecretSealed
		}
		secret, err = OpenSecret(d.keyring, c.org, r.EndpointID, sealed)
	}
	if err != nil {
		d.logger.ErrorContext(ctx, "webhook signing secret does not open", slog.String("organization_id", c.org.String()),
			slog.String("endpoint_id", r.EndpointID.String()), slog.String("error", err.Error()))
		return outcome{reason: "internal error: the signing secret is unavailable"}
	}
	if _, err := egress.ValidateURL(ctx, r.Url, d.egress); err != nil {
		return outcome{health: true, reason: "refused: " + describe(err)}
	}
	body, err := payloadBody(r.EventID, c.org, r.EventType, *r.EventCreatedAt, r.EventData)
	if err != nil {
		return outcome{final: true, reason: "the event's data cannot be encoded"}
	}
	return d.send(ctx, r.Url, secret, r.EventType, r.EventID, body)
}

// payload is the body of every delivery (part 1, "Webhook delivery").
type payload struct {
	ID             uuid.UUID       `json:"id"`
	EventType      string          `json:"event_type"`
	OrganizationID uuid.UUID       `json:"organization_id"`
	CreatedAt      time.Time       `json:"created_at"`
	Data           json.RawMessage `json:"data"`
}

// payloadBody encodes a delivery's body; the same event always encodes to the same bytes.
func payloadBody(eventID, org uuid.UUID, eventType string, createdAt time.Time, data json.RawMessage) ([]byte, error) {
	if len(data) == 0 {
		data = json.RawMessage(`{}`)
	}
	return json.Marshal(payload{ID: eventID, EventType: eventType, OrganizationID: org, CreatedAt: createdAt.UTC(), Data: data})
}

// send POSTs one signed attempt.
func (d *Deliverer) send(ctx context.Context, target, secret, eventType string, eventID uuid.UUID, body []byte) outcome {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return outcome{health: true, reason: "the endpoint URL is not valid"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhook.UserAgent)
	req.Header.Set(webhook.EventHeader, eventType)
	req.Header.Set(webhook.EventIDHeader, eventID.String())
	req.Header.Set(webhook.SignatureHeader, webhook.Sign(secret, d.now(), body))
	resp, err := d.client.Do(req)
	if err != nil {
		return outcome{health: true, reason: describe(err)}
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, ExcerptBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainBytes))
	status := int32(resp.StatusCode)
	excerpt := excerptOf(head)
	o := outcome{health: true, status: &status, excerpt: &excerpt}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		o.delivered = true
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		o.reason = fmt.Sprintf("redirect (HTTP %d) not followed", resp.StatusCode)
	default:
		o.reason = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return o
}

// describe turns a failed request into a delivery's error_reason.
func describe(err error) string {
	var ne interface{ Timeout() bool }
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf("timeout: no answer within %s", RequestTimeout)
	}
	if s := egress.Describe(err); s != "" {
		return "connection error: " + s
	}
	return "connection error"
}

// excerptOf keeps what text columns can hold of an answer's first bytes: valid UTF-8 (a character cut at
// the end is dropped), no NUL.
func excerptOf(b []byte) string {
	if n := len(b); n > 0 && !utf8.Valid(b) {
		for i := 1; i <= utf8.UTFMax && i <= n; i++ {
			if utf8.RuneStart(b[n-i]) {
				if !utf8.FullRune(b[n-i:]) {
					b = b[:n-i]
				}
				break
			}
		}
	}
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "")
}

// record settles an attempt: the delivery's new state, the next attempt's job, the endpoint's health.
func (d *Deliverer) record(ctx context.Context, c claimed, o outcome) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	now := d.now()
	status, next := "failed", now
	switch {
	case o.delivered:
		status = "delivered"
	case o.final || c.row.AttemptCount >= c.row.MaxAttempts:
		status = "abandoned"
	default:
		next = now.Add(Backoff(int(c.row.AttemptCount)))
	}
	var reason *string
	if o.reason != "" {
		reason = &o.reason
	}
	if o.delivered {
		// The delivery and the endpoint's health in one statement.
		return db.WithOrgTx(ctx, d.pool, c.org, func(ctx context.Context, tx pgx.Tx) error {
			return d.queries.WebhookDeliveryRecordDelivered(ctx, tx, dbq.WebhookDeliveryRecordDeliveredParams{
				OrganizationID: c.org, ID: c.id, LeaseUntil: *c.row.LeaseUntil, Now: now, FreshAfter: now.Add(-time.Second),
				ResponseStatus: *o.status, ResponseBodyExcerpt: *o.excerpt,
			})
		})
	}
	return db.WithOrgTx(ctx, d.pool, c.org, func(ctx context.Context, tx pgx.Tx) error {
		n, err := d.queries.WebhookDeliveryRecord(ctx, tx, dbq.WebhookDeliveryRecordParams{
			OrganizationID: c.org, ID: c.id, LeaseUntil: *c.row.LeaseUntil, Now: now,
			Status: status, NextAttemptAt: next, ResponseStatus: o.status, ResponseBodyExcerpt: o.excerpt, ErrorReason: reason,
		})
		if err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		if n == 0 {
			return nil // redelivered meanwhile: the new lifecycle owns the row
		}
		if status == "failed" {
			if _, err := d.jobs.InsertTx(ctx, tx, AttemptArgs{OrganizationID: c.org, DeliveryID: c.id}, &river.InsertOpts{ScheduledAt: next}); err != nil {
				return fmt.Errorf("schedule next attempt: %w", err)
			}
		}
		if o.health {
			return d.failureTx(ctx, tx, c.org, c.row.EndpointID, o.reason, now)
		}
		return nil
	})
}

// failureTx extends the endpoint's run of failures and disables it when the run is long enough, telling the
// organization's owners and admins.
func (d *Deliverer) failureTx(ctx context.Context, tx pgx.Tx, org, endpoint uuid.UUID, reason string, now time.Time) error {
	h, err := d.queries.WebhookEndpointRecordFailure(ctx, tx, dbq.WebhookEndpointRecordFailureParams{
		OrganizationID: org, ID: endpoint, Now: now, Reason: reason,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("record endpoint failure: %w", err)
	}
	if !h.Enabled || h.ConsecutiveFailures < DisableMinFailures || h.FailingSince == nil || now.Sub(*h.FailingSince) < DisableAfter {
		return nil
	}
	why := fmt.Sprintf("Disabled automatically: every delivery failed for over %d hours (%d attempts in a row; last: %s).",
		int(DisableAfter.Hours()), h.ConsecutiveFailures, reason)
	n, err := d.queries.WebhookEndpointAutoDisable(ctx, tx, dbq.WebhookEndpointAutoDisableParams{
		OrganizationID: org, ID: endpoint, Reason: why, Now: now,
	})
	if err != nil || n == 0 {
		return err
	}
	admins, err := d.queries.WebhookOrgAdmins(ctx, tx, org)
	if err != nil {
		return fmt.Errorf("list organization admins: %w", err)
	}
	for _, user := range admins {
		if err := d.notifier.NotifyTx(ctx, tx, notify.Event{
			UserID: user, OrganizationID: org, Category: notify.HealthWorkerDowntime,
			Title: "A webhook endpoint was disabled after failing for a day",
			Body:  fmt.Sprintf("%s answered no delivery successfully for over %d hours, so it was disabled. Fix the receiver, then enable the endpoint again; undelivered events can be redelivered.", h.Url, int(DisableAfter.Hours())),
			Link:  "/settings/webhooks",
		}); err != nil {
			return err
		}
	}
	return nil
}

// Sweep enqueues an attempt for every stalled delivery (due for longer than StalledGrace without its job
// having run, or in flight past its lease) and trims old rate windows and drop records. It returns how many
// attempts it enqueued.
func (d *Deliverer) Sweep(ctx context.Context) (int, error) {
	now := d.now()
	stalled, err := d.queries.WebhookDeliveryStalled(ctx, d.pool, dbq.WebhookDeliveryStalledParams{
		Now: now, DueBefore: now.Add(-StalledGrace), RowLimit: sweepBatch,
	})
	if err != nil {
		return 0, fmt.Errorf("find stalled deliveries: %w", err)
	}
	if len(stalled) > 0 {
		err = db.WithTx(ctx, d.pool, func(ctx context.Context, tx pgx.Tx) error {
			for _, s := range stalled {
				if _, err := d.jobs.InsertTx(ctx, tx, AttemptArgs{OrganizationID: s.OrganizationID, DeliveryID: s.ID}, nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("enqueue stalled deliveries: %w", err)
		}
	}
	if _, err := d.queries.WebhookLimitsSweep(ctx, d.pool, dbq.WebhookLimitsSweepParams{
		WindowsBefore: now.Add(-10 * RateWindow), DropsBefore: now.Add(-DropRetention),
	}); err != nil {
		return len(stalled), fmt.Errorf("sweep webhook rate windows: %w", err)
	}
	return len(stalled), nil
}
