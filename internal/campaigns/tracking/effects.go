package tracking

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/engagement"
	"github.com/outflowhq/outflow/internal/audience/activity"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// The contact activities human opens and clicks record (types the activity log already has).
const (
	activityOpened  = activity.EmailOpened
	activityClicked = activity.EmailClicked
)

// ClickArgs is the job that applies a human click's effects once the burst window plus a second has passed
// (Windows.EffectsAt), unless a later click re-judged it a burst meanwhile. It is enqueued, scheduled for
// that time, in the transaction that stores the click, so a process killed in between loses neither.
type ClickArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	EventID        uuid.UUID `json:"event_id"`
}

// Kind names the job in River.
func (ClickArgs) Kind() string { return "tracking_click_effects" }

// InsertOpts keep the job on the default queue; a click's effects are a few statements, retried like any
// short job.
func (ClickArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 10} }

// Clicks applies human clicks' deferred effects. Build it with NewClicks; ClickWorker runs it.
type Clicks struct {
	pool    *pgxpool.Pool
	outbox  *events.Outbox
	signer  *Signer
	queries *dbq.Queries
}

// NewClicks builds the click effects over the application pool: events through outbox, link labels read
// from the sent HTML with the tokens signer verifies.
func NewClicks(pool *pgxpool.Pool, outbox *events.Outbox, signer *Signer) *Clicks {
	return &Clicks{pool: pool, outbox: outbox, signer: signer, queries: dbq.New()}
}

// Apply applies the effects of the human click id once they are due at now: the send's first human click
// stamps clicked_at and counts on its lead (once per send; a send machines clicked before stops counting as
// clicked only by machines), and every human click raises
// campaign.email_clicked (url, link_label, clicked_at) and the contact's email_clicked activity. A click
// re-judged a burst, or one applied before, changes nothing. When the effects are not due yet, it returns
// how long to wait.
func (c *Clicks) Apply(ctx context.Context, org, id uuid.UUID, now time.Time) (time.Duration, error) {
	var wait time.Duration
	err := db.WithOrgTx(ctx, c.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		q := c.queries
		if err := q.TrackingLock(ctx, tx, org); err != nil {
			return err
		}
		ev, err := q.TrackingClickPending(ctx, tx, dbq.TrackingClickPendingParams{OrganizationID: org, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if ev.EffectsDueAt.After(now) {
			wait = ev.EffectsDueAt.Sub(now)
			return nil
		}
		if err := q.TrackingClickApplied(ctx, tx, dbq.TrackingClickAppliedParams{OrganizationID: org, ID: id, At: now}); err != nil {
			return err
		}
		if err := engagement.RecordClickTx(ctx, tx, org, id); err != nil {
			return err
		}
		tasks, err := q.TrackingTasks(ctx, tx, dbq.TrackingTasksParams{OrganizationID: org, Ids: []uuid.UUID{ev.TaskID}})
		if err != nil || len(tasks) == 0 {
			return err
		}
		t := tasks[0]
		first, err := q.TrackingClickStamp(ctx, tx, dbq.TrackingClickStampParams{OrganizationID: org, ID: t.ID, At: ev.At})
		if err != nil || !t.CampaignID.Valid || !t.ContactID.Valid {
			return err
		}
		if first > 0 {
			// The send's first person's click: counted on its lead, and no longer clicked only by machines.
			counts := leadCounts{OrganizationID: org}
			counts.add(t, 0, 0, 1, -boolInt(t.MachineClicked), ev.At)
			if err := counts.apply(ctx, tx, q); err != nil {
				return err
			}
		}
		html, err := q.TrackingSendHTML(ctx, tx, dbq.TrackingSendHTMLParams{OrganizationID: org, ID: t.ID})
		if err != nil {
			return err
		}
		var label *string
		if l := c.signer.linkLabel(html, t.ID, int(ev.LinkIndex)); l != "" {
			label = &l
		}
		click := map[string]any{"url": ev.Url, "link_label": label, "clicked_at": ev.At.UTC()}
		if _, err := c.outbox.Emit(ctx, tx, events.CampaignEmailClicked, payload(t, click)); err != nil {
			return err
		}
		acts := activities{OrganizationID: org, ActivityType: activityClicked}
		if err := acts.add(t, ev.At, map[string]any{"url": ev.Url, "link_label": label}); err != nil {
			return err
		}
		return acts.apply(ctx, tx, q)
	})
	return wait, err
}

// ClickWorker runs ClickArgs jobs.
type ClickWorker struct {
	river.WorkerDefaults[ClickArgs]
	// Clicks applies the effects (nil on insert-only clients, which never run the job).
	Clicks *Clicks
}

// Work applies the click's effects, or snoozes the job until they are due.
func (w *ClickWorker) Work(ctx context.Context, job *river.Job[ClickArgs]) error {
	wait, err := w.Clicks.Apply(ctx, job.Args.OrganizationID, job.Args.EventID, time.Now())
	if err == nil && wait > 0 {
		return river.JobSnooze(wait)
	}
	return err
}

// payload is the data of a tracked send's campaign event: what campaign.email_sent carries (the mailbox
// also under the contract's name, email_account_id) and extra.
func payload(t dbq.TrackingTasksRow, extra map[string]any) map[string]any {
	out := map[string]any{"campaign_id": t.CampaignID.UUID, "campaign_name": t.CampaignName, "contact_id": t.ContactID.UUID,
		"email": t.ToEmail, "step_id": t.StepID.UUID, "step_name": t.StepName, "task_id": t.ID,
		"message_id": t.MessageID, "mailbox_id": t.MailboxID.UUID, "email_account_id": t.MailboxID.UUID,
		"from_email": t.FromEmail}
	if t.VariantID.Valid {
		out["variant_id"] = t.VariantID.UUID
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// leadCounts gathers engagement deltas for campaign leads, applied in one statement.
type leadCounts dbq.TrackingLeadCountParams

// add counts opened, machineOpened, clicked and machineClicked (at at) for t's lead; a send outside a campaign
// has none.
func (c *leadCounts) add(t dbq.TrackingTasksRow, opened, machineOpened, clicked, machineClicked int32, at time.Time) {
	if !t.CampaignID.Valid || !t.ContactID.Valid {
		return
	}
	c.CampaignIds = append(c.CampaignIds, t.CampaignID.UUID)
	c.ContactIds = append(c.ContactIds, t.ContactID.UUID)
	c.Opened = append(c.Opened, opened)
	c.MachineOpened = append(c.MachineOpened, machineOpened)
	c.Clicked = append(c.Clicked, clicked)
	c.MachineClicked = append(c.MachineClicked, machineClicked)
	c.Ats = append(c.Ats, at)
}

func (c *leadCounts) apply(ctx context.Context, tx pgx.Tx, q *dbq.Queries) error {
	if len(c.CampaignIds) == 0 {
		return nil
	}
	return q.TrackingLeadCount(ctx, tx, dbq.TrackingLeadCountParams(*c))
}

// activities gathers contact activities of one type, recorded in one statement.
type activities dbq.TrackingActivityInsertParams

// add records the activity of t's contact at at, with the metadata the activity log and the timeline read
// for email events (activity.Entry) and extra.
func (a *activities) add(t dbq.TrackingTasksRow, at time.Time, extra map[string]any) error {
	meta := map[string]any{"task_id": t.ID, "subject": t.Subject, "campaign_id": t.CampaignID.UUID,
		"campaign_name": t.CampaignName, "step_id": t.StepID.UUID, "step_name": t.StepName,
		"email_account_id": t.MailboxID.UUID, "email_account_email": t.FromEmail, "email_account_name": t.FromName}
	for k, v := range extra {
		meta[k] = v
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	a.Ids, a.ContactIds = append(a.Ids, id), append(a.ContactIds, t.ContactID.UUID)
	a.Metadata, a.Ats = append(a.Metadata, raw), append(a.Ats, at)
	return nil
}

func (a *activities) apply(ctx context.Context, tx pgx.Tx, q *dbq.Queries) error {
	if len(a.Ids) == 0 {
		return nil
	}
	return q.TrackingActivityInsert(ctx, tx, dbq.TrackingActivityInsertParams(*a))
}

// boolInt is 1 for true, 0 for false: a lead count's delta.
func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
