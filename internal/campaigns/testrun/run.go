package testrun

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/truncate"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// CompressedWait is how long each wait of a test run lasts, whatever its real length: a follow-up's wait_after
// days and a wait step's minutes alike. A few seconds show the sequence's order and threading without making a
// person wait for it; the River scheduler may add up to five seconds to each.
const CompressedWait = 5 * time.Second

// Run states.
const (
	StateRunning   = "running"
	StateCompleted = "completed"
	StateFailed    = "failed"
	StateCancelled = "cancelled"
)

// Step states.
const (
	StepWaiting   = "waiting"
	StepRunning   = "running"
	StepCompleted = "completed"
	StepSkipped   = "skipped"
	StepFailed    = "failed"
)

// Issue is an error a person can act on: what went wrong and how to get past it.
type Issue struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// issueOf turns an error into an Issue, keeping an API error's code, message and fix.
func issueOf(err error, fix string) Issue {
	e := apierror.From(err)
	return Issue{Code: e.Code, Message: e.Message, Fix: cmp.Or(e.Fix, fix)}
}

// Step is one step's progress, as the run's steps column stores it.
type Step struct {
	StepID      uuid.UUID     `json:"step_id"`
	Name        string        `json:"name"`
	Kind        string        `json:"kind"`
	State       string        `json:"state"`
	Outcome     string        `json:"outcome,omitempty"`
	Detail      string        `json:"detail,omitempty"`
	TaskID      uuid.NullUUID `json:"task_id"`
	MessageID   string        `json:"message_id,omitempty"`
	StartedAt   *time.Time    `json:"started_at,omitempty"`
	CompletedAt *time.Time    `json:"completed_at,omitempty"`
	Error       *Issue        `json:"error,omitempty"`
}

// Run is a test run with its progress decoded.
type Run struct {
	dbq.CampaignTestRun
	Progress []Step
}

// Issue is the run's error, when it failed.
func (r Run) Issue() *Issue {
	if r.ErrorCode == "" {
		return nil
	}
	return &Issue{Code: r.ErrorCode, Message: r.ErrorMessage, Fix: r.ErrorFix}
}

func runOf(row dbq.CampaignTestRun) (Run, error) {
	r := Run{CampaignTestRun: row}
	if err := json.Unmarshal(row.Steps, &r.Progress); err != nil {
		return Run{}, fmt.Errorf("testrun: steps of run %s: %w", row.ID, err)
	}
	return r, nil
}

var queries = dbq.New()

// NotFound is the answer for an unknown run (a foreign one, or one of another campaign, included).
func NotFound() error { return apierror.NotFound("test_run_not_found", "Test run not found.") }

// Runner starts, advances and cancels test runs.
type Runner struct {
	pool *pgxpool.Pool
	// wait is what every wait of a run lasts (CompressedWait unless told otherwise).
	wait time.Duration
	now  func() time.Time
}

// NewRunner builds the runner over pool; wait is how long each wait lasts (0: CompressedWait), so a
// deployment or a test can make runs quicker or slower.
func NewRunner(pool *pgxpool.Pool, wait time.Duration) *Runner {
	if wait <= 0 {
		wait = CompressedWait
	}
	return &Runner{pool: pool, wait: wait, now: time.Now}
}

// StartInput is what POST /campaigns/{id}/test asks for.
type StartInput struct {
	// ProspectEmail is where the mail goes ("": the contact's address).
	ProspectEmail string
	// ContactID is who the mail is personalised for (invalid: the contact with ProspectEmail, if any).
	ContactID uuid.NullUUID
	// MailboxID is the sender (invalid: the campaign's first active sender).
	MailboxID uuid.NullUUID
	// Only limits the mailboxes the caller may send from (nil: every mailbox of the organization).
	Only []uuid.UUID
}

// Start checks that c can be tested, records a run of its sequence for the prospect and enqueues its first step,
// all in tx.
func (r *Runner) Start(ctx context.Context, tx pgx.Tx, jobs events.Inserter, org uuid.UUID, c campaign.Campaign, in StartInput) (Run, error) {
	steps, err := campaign.Steps(ctx, tx, org, c.ID)
	if err != nil {
		return Run{}, err
	}
	if err := testable(steps); err != nil {
		return Run{}, err
	}
	contact, prospect, err := prospectOf(ctx, tx, org, in)
	if err != nil {
		return Run{}, err
	}
	mailbox, err := senderOf(ctx, tx, org, c, in)
	if err != nil {
		return Run{}, err
	}
	now := r.now()
	firstDue := now
	if steps[0].WaitAfter > 0 {
		firstDue = now.Add(r.wait)
	}
	progress := make([]Step, len(steps))
	for i, s := range steps {
		progress[i] = Step{StepID: s.ID, Name: s.Name, Kind: kindOf(s), State: StepWaiting}
	}
	progress[0].Detail = due(firstDue)
	raw, err := json.Marshal(progress)
	if err != nil {
		return Run{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Run{}, err
	}
	row, err := queries.CampaignTestRunInsert(ctx, tx, dbq.CampaignTestRunInsertParams{OrganizationID: org, CampaignID: c.ID,
		ID: id, ContactID: contact, MailboxID: uuid.NullUUID{UUID: mailbox.ID, Valid: true}, ProspectEmail: prospect,
		CurrentStepID: uuid.NullUUID{UUID: steps[0].ID, Valid: true}, Steps: raw})
	if err != nil {
		return Run{}, err
	}
	if err := insertStep(ctx, tx, jobs, org, id, 0, firstDue, now); err != nil {
		return Run{}, err
	}
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionSend, Event: "campaign.test_started",
		EntityType: audit.EntityCampaign, EntityID: c.ID.String(), Metadata: map[string]any{"test_run_id": id,
			"prospect_email": prospect, "mailbox_id": mailbox.ID, "steps": len(steps)}}); err != nil {
		return Run{}, err
	}
	return runOf(row)
}

// testable refuses (400 campaign_invalid) a sequence a test run cannot carry out: one with no email step, or
// with app_action steps. An app action would call the customer's real app, which acts on its own systems (a
// CRM record, a provisioned account) for a test address that may be no contact at all; the contract gives
// actions no test mode, so a test run never makes one.
func testable(steps []campaign.Step) error {
	var email int
	var agentSteps []string
	for _, s := range steps {
		switch kindOf(s) {
		case campaign.StepEmail:
			email++
		case campaign.ActionApp:
			agentSteps = append(agentSteps, fmt.Sprintf("step %d (%s)", s.Position+1, kindOf(s)))
		}
	}
	if email == 0 {
		return apierror.BadRequest("campaign_invalid", "The campaign has no email step to test.").
			WithFix("Add an email step with POST /campaigns/{id}/steps.")
	}
	if len(agentSteps) > 0 {
		return apierror.BadRequest("campaign_invalid", "Test runs do not run app_action steps, which would call your app for real: "+
			strings.Join(agentSteps, ", ")+".").WithFix("Test a copy of the campaign without those steps, and test the app with POST /app-connections/{id}/test.")
	}
	return nil
}

// kindOf is a step's kind as a run reports it: email, wait, or the action type of an action step.
func kindOf(s campaign.Step) string {
	if s.Kind == campaign.StepAction {
		return s.ActionType()
	}
	return s.Kind
}

// prospectOf resolves who a run writes to and for whom: the contact named, else the contact with the
// prospect's address, else none (the address alone personalises).
func prospectOf(ctx context.Context, tx pgx.Tx, org uuid.UUID, in StartInput) (uuid.NullUUID, string, error) {
	var prospect string
	if in.ProspectEmail != "" {
		var ok bool
		if prospect, ok = contacts.NormalizeEmail(in.ProspectEmail); !ok {
			return uuid.NullUUID{}, "", apierror.BadRequest("invalid_prospect_email",
				fmt.Sprintf("prospect_email %q is not an email address.", in.ProspectEmail))
		}
	}
	switch {
	case in.ContactID.Valid:
		c, err := compose.LoadContact(ctx, tx, org, in.ContactID.UUID)
		if err != nil {
			return uuid.NullUUID{}, "", err
		}
		return uuid.NullUUID{UUID: c.ID, Valid: true}, cmp.Or(prospect, c.Email), nil
	case prospect == "":
		return uuid.NullUUID{}, "", apierror.BadRequest("prospect_required", "Send prospect_email, contact_id or both.")
	}
	c, ok, err := compose.ContactByEmail(ctx, tx, org, prospect)
	if err != nil || !ok {
		return uuid.NullUUID{}, prospect, err
	}
	return uuid.NullUUID{UUID: c.ID, Valid: true}, prospect, nil
}

// senderOf is the run's mailbox: the one named (of org, usable by the caller, active), else the campaign's first
// active sender.
func senderOf(ctx context.Context, tx pgx.Tx, org uuid.UUID, c campaign.Campaign, in StartInput) (dbq.Mailbox, error) {
	if !in.MailboxID.Valid {
		m, ok, err := compose.FirstSender(ctx, tx, org, &c, in.Only)
		if err != nil {
			return dbq.Mailbox{}, err
		}
		if !ok {
			return dbq.Mailbox{}, apierror.BadRequest("campaign_invalid", "The campaign has no active mailbox to send from.").
				WithFix("Add an active mailbox to its senders or tags, or name one with mailbox_id.")
		}
		return m, nil
	}
	m, err := queries.MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: org, ID: in.MailboxID.UUID})
	if errors.Is(err, pgx.ErrNoRows) || err == nil && in.Only != nil && !slices.Contains(in.Only, m.ID) {
		return dbq.Mailbox{}, apierror.BadRequest("invalid_mailbox_id", "mailbox_id names no mailbox of this organization.")
	}
	if err != nil {
		return dbq.Mailbox{}, err
	}
	if m.Status != "active" {
		return dbq.Mailbox{}, apierror.BadRequest("mailbox_inactive", "The mailbox is "+m.Status+"; it sends nothing until it is active again.").
			WithFix("Set its status to active with PATCH /emails/{id}, or name another mailbox.")
	}
	return m, nil
}

// due is a waiting step's detail.
func due(at time.Time) string {
	return "Due at " + at.UTC().Format(time.RFC3339) + "."
}

// insertStep enqueues the job that runs step pos of a run at due (now or later).
func insertStep(ctx context.Context, tx pgx.Tx, jobs events.Inserter, org, run uuid.UUID, pos int, due, now time.Time) error {
	var opts *river.InsertOpts
	if due.After(now) {
		opts = &river.InsertOpts{ScheduledAt: due}
	}
	_, err := jobs.InsertTx(ctx, tx, Args{OrganizationID: org, RunID: run, Position: pos}, opts)
	return err
}

// Get reads one run of a campaign.
func Get(ctx context.Context, tx pgx.Tx, org, campaignID, id uuid.UUID) (Run, error) {
	row, err := queries.CampaignTestRunGet(ctx, tx, dbq.CampaignTestRunGetParams{OrganizationID: org, CampaignID: campaignID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, NotFound()
	}
	if err != nil {
		return Run{}, err
	}
	return runOf(row)
}

// List reads up to rowLimit runs of a campaign, newest first, after the run named by after (when valid).
func List(ctx context.Context, tx pgx.Tx, org, campaignID uuid.UUID, after uuid.NullUUID, rowLimit int32) ([]Run, error) {
	rows, err := queries.CampaignTestRunList(ctx, tx, dbq.CampaignTestRunListParams{OrganizationID: org, CampaignID: campaignID,
		After: after, RowLimit: rowLimit})
	if err != nil {
		return nil, err
	}
	out := make([]Run, len(rows))
	for i, row := range rows {
		if out[i], err = runOf(row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Cancel stops a running run of a campaign: its step message still queued is cancelled, every step not done is
// skipped, and the jobs still to come find it cancelled. A finished run is 400 test_run_finished.
func (r *Runner) Cancel(ctx context.Context, tx pgx.Tx, org, campaignID, id uuid.UUID) (Run, error) {
	run, err := lock(ctx, tx, org, id)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && run.CampaignID != campaignID {
		return Run{}, NotFound()
	}
	if err != nil {
		return Run{}, err
	}
	if run.State != StateRunning {
		return Run{}, apierror.BadRequest("test_run_finished", "The test run is "+run.State+"; only a running test run can be cancelled.")
	}
	now := r.now()
	for i := range run.Progress {
		s := &run.Progress[i]
		switch {
		case s.State == StepRunning && s.TaskID.Valid:
			status, err := queries.CampaignTestRunTaskCancel(ctx, tx, dbq.CampaignTestRunTaskCancelParams{OrganizationID: org, ID: s.TaskID.UUID})
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return Run{}, err
			}
			switch status {
			case "sent", "sending":
				s.finish(StepCompleted, "sent", "Sent before the run was cancelled.", now)
			case "canceled":
				s.finish(StepSkipped, "cancelled", "Cancelled with the run before it was sent.", now)
			default:
				s.finish(StepFailed, "failed", "The message did not go out.", now)
			}
		case s.State == StepRunning || s.State == StepWaiting:
			s.finish(StepSkipped, "cancelled", "Cancelled with the run.", now)
		}
	}
	run.State = StateCancelled
	run.CompletedAt = &now
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "campaign.test_cancelled",
		EntityType: audit.EntityCampaign, EntityID: campaignID.String(), Metadata: map[string]any{"test_run_id": id}}); err != nil {
		return Run{}, err
	}
	return save(ctx, tx, run)
}

// finish ends a step in state with an outcome and a detail.
func (s *Step) finish(state, outcome, detail string, now time.Time) {
	s.State, s.Outcome, s.Detail, s.CompletedAt = state, outcome, detail, &now
}

// lock reads a run for update.
func lock(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (Run, error) {
	row, err := queries.CampaignTestRunLock(ctx, tx, dbq.CampaignTestRunLockParams{OrganizationID: org, ID: id})
	if err != nil {
		return Run{}, err
	}
	return runOf(row)
}

// save writes a run's state, progress and error back.
func save(ctx context.Context, tx pgx.Tx, run Run) (Run, error) {
	raw, err := json.Marshal(run.Progress)
	if err != nil {
		return Run{}, err
	}
	row, err := queries.CampaignTestRunSave(ctx, tx, dbq.CampaignTestRunSaveParams{OrganizationID: run.OrganizationID, ID: run.ID,
		State: run.State, CurrentStepID: run.CurrentStepID, Steps: raw, ErrorCode: run.ErrorCode, ErrorMessage: run.ErrorMessage,
		ErrorFix: run.ErrorFix, CompletedAt: run.CompletedAt})
	if err != nil {
		return Run{}, err
	}
	return runOf(row)
}

// fail ends the run with issue, and step pos with it when pos is a step (the job past the last step has none).
func fail(run *Run, pos int, issue Issue, now time.Time) {
	if pos < len(run.Progress) {
		s := &run.Progress[pos]
		s.finish(StepFailed, "failed", issue.Message, now)
		s.Error = &issue
		run.CurrentStepID = uuid.NullUUID{UUID: s.StepID, Valid: true}
	}
	run.State, run.CompletedAt = StateFailed, &now
	run.ErrorCode, run.ErrorMessage, run.ErrorFix = issue.Code, truncate.Chars(issue.Message, 1000), truncate.Chars(issue.Fix, 1000)
}
