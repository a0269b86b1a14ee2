package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// CodeAppActionFailed is the error code of an app action whose call failed: no answer in time, an answer that
// is not 2xx, not a JSON object, or larger than 64 KiB.
const CodeAppActionFailed = "app_action_failed"

// How often the engine looks again at a lead whose app action is out of its hands. A running call answers
// within the client's timeout (30 s); the look again re-enqueues a job that was lost (the insert is unique by
// step run, so a live one is not doubled). A blocked run waits for a person; the daily look keeps its lead
// open (the campaign does not complete under it) and costs one read.
const (
	appActionRecheck = 10 * time.Minute
	blockedRecheck   = 24 * time.Hour
)

// Wait reasons of a lead at an app_action step.
const (
	// ReasonAppAction: the call is being made (or queued).
	ReasonAppAction = "waiting for the app action's answer"
	// ReasonAppBlocked: the call failed and the step's on_error is block.
	ReasonAppBlocked = "blocked: the app action failed (app_action_failed); POST /campaigns/{id}/step-runs/{runId}/retry runs it again"
)

// AppActionArgs is the job that makes one app_action step run's signed call to the customer's app, outside
// any transaction, and records its outcome (FinishAppAction). The worker is package apps'.
type AppActionArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	StepRunID      uuid.UUID `json:"step_run_id"`
}

// Kind names the job.
func (AppActionArgs) Kind() string { return "app_action" }

// InsertOpts keeps one job per step run waiting or running: the engine's look again and a retry insert it
// again, and only a finished one lets a new one in. A job that fails on the database is retried; a failed call
// is an outcome, not a job failure.
func (AppActionArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateRunning,
		rivertype.JobStateScheduled}}}
}

// appActionStep calls the customer's app for the lead (through the app_action job) and goes on when the answer
// is captured; a failed call is routed by the step's on_error.
type appActionStep struct{}

func (appActionStep) run(ctx context.Context, pl *planner, d *decision, step campaign.Step) error {
	r, found, err := pl.stepRun(ctx, d.lead.ContactID, step.ID)
	if err != nil {
		return err
	}
	if !found || r.Kind != campaign.ActionApp {
		if r, err = pl.startRun(ctx, d.lead.ContactID, step, RunRunning, "", nil); err != nil {
			return err
		}
	}
	switch r.Status {
	case RunSucceeded:
		pl.advance(d) // the job captured the answer in the lead's app values
		return nil
	case RunRunning:
		if _, err := pl.jobs.InsertTx(ctx, pl.tx, AppActionArgs{OrganizationID: pl.org, StepRunID: r.ID}, nil); err != nil {
			return err
		}
		d.wait(pl.now.Add(appActionRecheck), ReasonAppAction)
		return nil
	case RunBlocked:
		d.wait(pl.now.Add(blockedRecheck), ReasonAppBlocked)
		return nil
	}
	switch step.AppAction().OnError { // failed
	case campaign.OnErrorContinue:
		pl.advance(d)
	case campaign.OnErrorBlock:
		d.wait(pl.now.Add(blockedRecheck), ReasonAppBlocked)
	default:
		pl.stop(d, stateFailed, "", fmt.Sprintf("Step %d's app action failed (%s): %s", step.Position+1,
			CodeAppActionFailed, errorMessage(r.Error)))
	}
	return nil
}

// errorMessage is the message of a step run's stored error.
func errorMessage(raw []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &e)
	return e.Message
}

// AppOutcome is what an app_action call came to.
type AppOutcome struct {
	// Output is the app's answer, a JSON object, when the call succeeded.
	Output json.RawMessage
	// Failure says, for people, why the call failed ("" when it succeeded).
	Failure string
	// Step is the step's config: its output_key captures Output, its on_error decides whether a failure blocks.
	Step campaign.AppAction
}

// FinishAppAction records, in tx of org, the outcome of step run id's call at now: succeeded with the answer
// (captured in the lead's app values under the step's output_key), or failed (blocked when on_error is block)
// with error {code app_action_failed, message}; the lead is due now either way, and campaign.action tells
// subscribers. A run that is no longer running (finished by a duplicate job) is left alone: ok is false. An
// answer Postgres will not store (over 64 KiB as stored, a NUL in a string) is a failure like any other.
func FinishAppAction(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, org, id uuid.UUID, o AppOutcome, now time.Time) (dbq.CampaignStepRun, bool, error) {
	r, err := queries.StepRunGet(ctx, tx, dbq.StepRunGetParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	// The lead first, as a planning pass locks it before the run.
	_, err = queries.EngineLeadLock(ctx, tx, dbq.EngineLeadLockParams{OrganizationID: org, CampaignID: r.CampaignID, ContactID: r.ContactID})
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return r, false, err
	}
	done, err := finishRun(ctx, tx, org, id, o, now)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	key := o.Step.OutputKey
	if done.Status != RunSucceeded {
		key = ""
	}
	if err := queries.StepRunLeadDue(ctx, tx, dbq.StepRunLeadDueParams{OutputKey: key, Output: done.Output, Now: now,
		OrganizationID: org, CampaignID: done.CampaignID, ContactID: done.ContactID}); err != nil {
		return done, false, err
	}
	data := map[string]any{"campaign_id": done.CampaignID, "step_id": done.StepID, "contact_id": done.ContactID,
		"step_run_id": done.ID, "action": campaign.ActionApp, "status": done.Status, "attempts": done.Attempts}
	if done.Status == RunSucceeded {
		data["output_key"] = o.Step.OutputKey
	} else {
		data["error"] = json.RawMessage(done.Error)
	}
	_, err = outbox.Emit(ctx, tx, events.CampaignAction, data)
	return done, true, err
}

// finishRun writes the run's outcome; an answer Postgres refuses to store (a check or a value it cannot hold)
// becomes the failure, written in place of it.
func finishRun(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, o AppOutcome, now time.Time) (dbq.CampaignStepRun, error) {
	if o.Failure == "" {
		sp, err := tx.Begin(ctx) // a savepoint: a refused answer must not end the transaction
		if err != nil {
			return dbq.CampaignStepRun{}, err
		}
		r, err := queries.StepRunFinish(ctx, sp, dbq.StepRunFinishParams{Status: RunSucceeded, Output: o.Output, Now: now,
			OrganizationID: org, ID: id})
		var pg *pgconn.PgError
		if !errors.As(err, &pg) || pg.Code[:2] != "22" && pg.Code[:2] != "23" {
			if err != nil {
				_ = sp.Rollback(ctx)
				return r, err
			}
			return r, sp.Commit(ctx)
		}
		if err := sp.Rollback(ctx); err != nil {
			return r, err
		}
		o.Failure = "the app's answer could not be stored: it must be a JSON object of at most 64 KiB without NUL characters"
	}
	status := RunFailed
	if o.Step.OnError == campaign.OnErrorBlock {
		status = RunBlocked
	}
	e, err := json.Marshal(map[string]string{"code": CodeAppActionFailed, "message": truncate.Chars(o.Failure, 1000)})
	if err != nil {
		return dbq.CampaignStepRun{}, err
	}
	return queries.StepRunFinish(ctx, tx, dbq.StepRunFinishParams{Status: status, Error: e, Now: now, OrganizationID: org, ID: id})
}

// RetryStepRun runs a blocked app_action step run of campaign again, in tx of org at now: the same id (so the
// app sees the same X-Service-Event-Id and Idempotency-Key), running, its job enqueued. 404
// step_run_not_found for a run that is not the campaign's; 409 step_run_not_blocked for one that is not
// blocked (nor failed under on_error block).
func RetryStepRun(ctx context.Context, tx pgx.Tx, jobs events.Inserter, org, campaignID, id uuid.UUID, now time.Time) (dbq.CampaignStepRun, error) {
	r, err := queries.StepRunRetry(ctx, tx, dbq.StepRunRetryParams{Now: now, OrganizationID: org, CampaignID: campaignID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		cur, err := queries.StepRunOfCampaign(ctx, tx, dbq.StepRunOfCampaignParams{OrganizationID: org, CampaignID: campaignID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return cur, apierror.NotFound("step_run_not_found", "Step run not found in this campaign.")
		}
		if err != nil {
			return cur, err
		}
		return cur, apierror.Conflict("step_run_not_blocked", fmt.Sprintf(
			"Step run %s is %s; only a blocked app_action step run can be retried.", id, cur.Status))
	}
	if err != nil {
		return r, err
	}
	_, err = jobs.InsertTx(ctx, tx, AppActionArgs{OrganizationID: org, StepRunID: r.ID}, nil)
	return r, err
}

// appValues decodes what a lead's app actions captured (campaign_leads.app) for its templates' .App; nil when
// nothing was.
func appValues(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "{}" {
		return nil, nil
	}
	var app map[string]any
	if err := json.Unmarshal(raw, &app); err != nil {
		return nil, fmt.Errorf("engine: the lead's app values: %w", err)
	}
	return app, nil
}
