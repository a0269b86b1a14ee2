package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Step run statuses (campaign_step_runs.status).
const (
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
	RunBlocked   = "blocked"
	RunWaiting   = "waiting"
	RunResumed   = "resumed"
	RunTimedOut  = "timed_out"
)

// ReasonEventTimedOut is why a lead whose wait_for_event step has on_timeout stop ended there.
const ReasonEventTimedOut = "the awaited event did not come in time and the step stops the sequence there"

// waitEventStep holds the lead until its contact's product event of the step's name arrives (POST /events
// resumes the wait through ResumeWaits and makes the lead due), or until timeout_minutes pass; then the
// step's on_timeout says whether the sequence continues or stops.
type waitEventStep struct{}

// eventWait is a wait_for_event step's config.
type eventWait struct {
	Name    string `json:"wait_event_name"`
	Timeout int    `json:"timeout_minutes"`
}

// timeout is how long the wait lasts: timeout_minutes, or the longest wait when it is omitted or 0.
func (w eventWait) timeout() time.Duration {
	minutes := w.Timeout
	if minutes <= 0 || minutes > campaign.MaxEventTimeout {
		minutes = campaign.MaxEventTimeout
	}
	return time.Duration(minutes) * time.Minute
}

func (waitEventStep) run(ctx context.Context, pl *planner, d *decision, step campaign.Step) error {
	var w eventWait
	_ = json.Unmarshal(step.Action, &w) // validated when the step was written
	reason := truncate.Chars(fmt.Sprintf("waiting for the event %q", w.Name), 200)
	r, found, err := pl.stepRun(ctx, d.lead.ContactID, step.ID)
	if err != nil {
		return err
	}
	if !found || r.Kind != campaign.ActionForEvent {
		until := pl.now.Add(w.timeout())
		if _, err := pl.startRun(ctx, d.lead.ContactID, step, RunWaiting, w.Name, &until); err != nil {
			return err
		}
		d.wait(until, reason)
		return nil
	}
	switch r.Status {
	case RunResumed:
		pl.advance(d)
		return nil
	case RunWaiting:
		if r.WaitUntil != nil && r.WaitUntil.After(pl.now) {
			d.wait(*r.WaitUntil, reason) // looked at early (a schedule change, a lifted hold): the wait goes on
			return nil
		}
		n, err := queries.StepRunTimeOut(ctx, pl.tx, dbq.StepRunTimeOutParams{OrganizationID: pl.org, ID: r.ID, Now: pl.now})
		if err != nil {
			return err
		}
		if n == 0 { // an event resumed it as its time ran out: the event wins
			pl.advance(d)
			return nil
		}
	}
	if step.OnTimeout == "stop" {
		pl.stop(d, stateCompleted, ReasonEventTimedOut, "")
		return nil
	}
	pl.advance(d)
	return nil
}

// advance moves the lead past a step that finished at the pass's now: the next step is due after its own
// delay, counted from now; with none left the lead completes.
func (pl *planner) advance(d *decision) {
	d.pos++
	d.last = &pl.now
	if d.due = pl.nextDue(d.pos, pl.now); d.due == nil {
		pl.stop(d, stateCompleted, "", "")
		return
	}
	d.reason = ReasonFollowUp
}

// stepRun reads the lead's run of a step (found false when it has none yet).
func (pl *planner) stepRun(ctx context.Context, contact, step uuid.UUID) (dbq.CampaignStepRun, bool, error) {
	r, err := queries.StepRunForLead(ctx, pl.tx, dbq.StepRunForLeadParams{OrganizationID: pl.org, CampaignID: pl.row.ID,
		ContactID: contact, StepID: step})
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// startRun starts the lead's run of an app_action or wait_for_event step at the pass's now.
func (pl *planner) startRun(ctx context.Context, contact uuid.UUID, step campaign.Step, status, event string, until *time.Time) (dbq.CampaignStepRun, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return dbq.CampaignStepRun{}, err
	}
	return queries.StepRunStart(ctx, pl.tx, dbq.StepRunStartParams{OrganizationID: pl.org, ID: id, CampaignID: pl.row.ID,
		StepID: step.ID, ContactID: contact, Kind: step.ActionType(), Status: status, WaitEventName: event,
		WaitUntil: until, Now: pl.now})
}

// Resumed is a wait_for_event step run a product event resumed: its lead is due now and goes on to the next
// step at the engine's next pass.
type Resumed struct {
	StepRunID, CampaignID, StepID, ContactID uuid.UUID
}

// ResumeWaits resumes, in the caller's transaction of org, every open wait of the contact for the event
// named eventName (POST /events): each becomes resumed by eventID and its lead is due at now. A wait resumed
// or timed out already is left alone (one conditional update; a second event resumes nothing), and so is a
// wait whose lead has ended or whose time ran out before now. The leads are locked first, in the order the
// planning pass locks them, so a resume and a pass never wait on each other in a cycle.
func ResumeWaits(ctx context.Context, tx pgx.Tx, org, contactID uuid.UUID, eventName string, eventID uuid.UUID, now time.Time) ([]Resumed, error) {
	campaigns, err := queries.StepRunLeadsLockForEvent(ctx, tx, dbq.StepRunLeadsLockForEventParams{OrganizationID: org,
		ContactID: contactID, EventName: eventName})
	if err != nil || len(campaigns) == 0 {
		return nil, err
	}
	rows, err := queries.StepRunsResume(ctx, tx, dbq.StepRunsResumeParams{OrganizationID: org, ContactID: contactID,
		CampaignIds: campaigns, EventName: eventName, EventID: eventID, Now: now})
	if err != nil {
		return nil, err
	}
	out := make([]Resumed, len(rows))
	for i, r := range rows {
		out[i] = Resumed{StepRunID: r.ID, CampaignID: r.CampaignID, StepID: r.StepID, ContactID: r.ContactID}
	}
	return out, nil
}
