package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/checks"
	"github.com/outflowhq/outflow/internal/campaigns/deliverability"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

var queries = dbq.New()

// Defaults of the engine's passes.
const (
	// DefaultBatch is how many due leads one pass over a campaign takes at most (no more than the campaign can
	// still send today): enough that a day of a large campaign is planned in a pass or two.
	DefaultBatch = 2000
	// campaignsPerRound is how many due campaigns one round lists; a run goes round after round.
	campaignsPerRound = 100
	// Interval is how often the periodic job runs the due campaigns: the most a due lead waits beyond its time.
	Interval = 5 * time.Second
	// retryBackoff is how long a lead waits after a failed send before its step is tried again.
	retryBackoff = 10 * time.Minute
	// maxLeadAttempts is how many failed sends of one step fail the lead (part 1's rule 2).
	maxLeadAttempts = 5
	// noSenderRecheck is how long a lead with no usable sender waits before it is looked at again.
	noSenderRecheck = time.Hour
)

// Engine runs active campaigns: it plans due leads into sends and takes each send's result back.
type Engine struct {
	pool      *pgxpool.Pool
	authGrace time.Duration
	now       func() time.Time
	batch     int
	// verify, when set, is asked to check the addresses of leads whose contacts have no verdict yet.
	verify Verifier
	// tracking signs campaign messages' pixels and tracked links (see Tracking).
	tracking Tracking
	// record records bounces and complaints, moving their leads through the engine (Bounced, Complained).
	record *deliverability.Recorder
}

// Tracking is what the engine needs to put open and click tracking into the campaign messages it sends: the
// deployment's token signer and the hosts a message's tracking URLs fall back to when neither its campaign nor
// its mailbox has a verified tracking domain (see compose.TrackingBaseURL).
type Tracking struct {
	// Signer signs the open, click and unsubscribe tokens; nil sends every message untracked and without an
	// unsubscribe page (no List-Unsubscribe header, no unsubscribe link), whatever the campaign asks.
	Signer *tracking.Signer
	// Host is the deployment's shared tracking host name (OUTFLOW_TRACKING_HOST), empty when none is set.
	Host string
	// PublicURL is the API's public URL (OUTFLOW_PUBLIC_URL), used when there is no tracking host.
	PublicURL string
}

// Verifier checks contacts' addresses in the background (the built-in checks) and stores their verdicts; the
// engine asks it for leads whose contacts have never been checked and looks at them again afterwards.
type Verifier interface {
	// RequestTx asks, in the caller's transaction, for the contacts' addresses to be checked.
	RequestTx(ctx context.Context, tx pgx.Tx, jobs events.Inserter, org uuid.UUID, contacts []uuid.UUID) error
}

// Options tune an Engine.
type Options struct {
	// AuthGrace is how long a domain may fail authentication before its mailboxes send no campaign mail.
	AuthGrace time.Duration
	// Now is the clock (nil: time.Now); simulations give their own.
	Now func() time.Time
	// Batch is how many due leads one pass takes (0: DefaultBatch).
	Batch int
	// Verifier checks addresses with no verdict before their first send (nil: they are sent unchecked).
	Verifier Verifier
	// Tracking lets campaigns with open_tracking or link_tracking carry the pixel and tracked links (zero:
	// every message goes out untracked).
	Tracking Tracking
}

// New builds the engine over pool.
func New(pool *pgxpool.Pool, o Options) *Engine {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	e := &Engine{pool: pool, authGrace: o.AuthGrace, now: o.Now, batch: o.Batch, verify: o.Verifier,
		tracking: o.Tracking}
	e.record = deliverability.New(e, e.now)
	return e
}

// Stats is what a run did.
type Stats struct {
	Passes, Leads, Sends int
	// Lateness is, for each send the run enqueued, how long after its lead's due time it was planned (the
	// pass's now minus the due_at it found): what the week simulation and its benchmark read the engine's
	// p99 lateness from. The periodic job ignores it.
	Lateness []time.Duration
}

// RunDue plans every campaign with due leads at the engine's now, round after round until no lead is due or a
// round moves nothing (every remaining campaign is being planned by another worker). jobs inserts the send
// jobs and events in each pass's transaction.
func (e *Engine) RunDue(ctx context.Context, jobs events.Inserter) (Stats, error) {
	var st Stats
	now := e.now()
	for ctx.Err() == nil {
		due, err := queries.EngineCampaignsDue(ctx, e.pool, dbq.EngineCampaignsDueParams{Now: now, RowLimit: campaignsPerRound})
		if err != nil {
			return st, fmt.Errorf("campaigns due: %w", err)
		}
		moved := 0
		for _, d := range due {
			r, err := e.Pass(ctx, jobs, d.OrganizationID, d.CampaignID, now)
			if err != nil {
				return st, fmt.Errorf("campaign %s: %w", d.CampaignID, err)
			}
			st.Passes++
			st.Leads += r.Leads
			st.Sends += r.Sends
			st.Lateness = append(st.Lateness, r.Lateness...)
			moved += r.Leads
		}
		if moved == 0 {
			break // nothing due, or every due campaign is being planned by another worker
		}
	}
	return st, ctx.Err()
}

// Result is what one pass did: leads looked at and sends enqueued, with each send's lateness (see Stats).
type Result struct {
	Leads, Sends int
	Lateness     []time.Duration
}

// Pass plans one campaign's due leads at now in one transaction of its organization. A campaign another
// worker is planning is skipped (a zero Result).
func (e *Engine) Pass(ctx context.Context, jobs events.Inserter, org, id uuid.UUID, now time.Time) (Result, error) {
	var res Result
	err := db.WithOrgTx(ctx, e.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		res = Result{}
		row, err := queries.EngineCampaignLock(ctx, tx, dbq.EngineCampaignLockParams{OrganizationID: org, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		p, err := e.newPass(ctx, tx, jobs, row, now)
		if err != nil {
			return err
		}
		if row.Status == campaign.StatusCompleted {
			restarted, err := p.restart(ctx)
			if err != nil || restarted == nil {
				return err
			}
			if p, err = e.newPass(ctx, tx, jobs, restarted.Campaign, now); err != nil {
				return err
			}
		}
		res, err = p.run(ctx)
		return err
	})
	return res, err
}

// restart starts a completed campaign again because a lead was added after it completed, when the launch
// checks pass, and answers it; otherwise the refusal is logged, the new leads wait for a person to start it, and
// it answers nil.
func (p *pass) restart(ctx context.Context) (*campaign.Campaign, error) {
	if err := queries.EngineRestartHandled(ctx, p.tx, dbq.EngineRestartHandledParams{OrganizationID: p.org, ID: p.row.ID}); err != nil {
		return nil, err
	}
	if p.row.EndDate != nil && !p.row.EndDate.After(p.now) {
		return nil, p.refuseRestart(ctx, "its end date has passed")
	}
	snap, err := checks.Load(ctx, p.tx, p.org, p.row.ID, p.now)
	if err != nil {
		return nil, err
	}
	if blockers := checks.LaunchBlockers(snap); len(blockers) > 0 {
		return nil, p.refuseRestart(ctx, blockers[0].Message)
	}
	c, err := p.store.Move(ctx, p.tx, p.row, campaign.StatusActive, "a lead was added after it completed")
	if err != nil {
		return nil, err
	}
	return &c, nil
}

func (p *pass) refuseRestart(ctx context.Context, why string) error {
	msg := "A lead was added after the campaign completed, but it could not restart: " + why
	if err := campaign.Log(ctx, p.tx, p.org, p.row.ID, uuid.NullUUID{}, "restart_refused", truncate.Chars(msg, 2000), nil); err != nil {
		return err
	}
	return queries.EngineLeadsRestartRefused(ctx, p.tx, dbq.EngineLeadsRestartRefusedParams{OrganizationID: p.org,
		CampaignID: p.row.ID, WaitReason: truncate.Chars("the campaign completed and could not restart: "+why, 200)})
}

// pause moves the campaign to a paused status on the engine's decision and tells its owner (the
// campaign_paused notification; the organization's admins when it has no owner).
func (p *pass) pause(ctx context.Context, status, reason string) error {
	if _, err := p.store.Move(ctx, p.tx, p.row, status, reason); err != nil {
		return err
	}
	return campaign.NotifyPaused(ctx, p.tx, p.jobs, p.row, reason)
}
