package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// The states of a run (part 1 "Run").
const (
	StateQueued           = "queued"
	StatePreflighting     = "preflighting"
	StateAwaitingApproval = "awaiting_approval"
	StateLaunching        = "launching"
	StateActive           = "active"
	StateFailed           = "failed"
	StateDenied           = "denied"
	StatePaused           = "paused"
	StateCompleted        = "completed"
	StateCancelled        = "cancelled"
)

// next lists, for each state, the states a run may move to from it. The final states (failed, denied,
// completed, cancelled) have none.
var next = map[string][]string{
	StateQueued:           {StatePreflighting, StateCancelled},
	StatePreflighting:     {StateAwaitingApproval, StateLaunching, StateCompleted, StateFailed, StateDenied, StateCancelled},
	StateAwaitingApproval: {StatePreflighting, StateDenied, StateFailed, StateCancelled},
	StateLaunching:        {StateActive, StateFailed, StateCancelled},
	StateActive:           {StatePaused, StateCompleted, StateFailed, StateCancelled},
	StatePaused:           {StateActive, StateCompleted, StateFailed, StateCancelled},
}

// Final reports whether state is one a run never leaves.
func Final(state string) bool { return len(next[state]) == 0 }

// errFinal answers a cancel of a run that already ended.
func errFinal(state string) error {
	return apierror.Conflict("run_final", fmt.Sprintf("The run is %s, a final state: there is nothing left to cancel.", state))
}

var errNotFound = apierror.NotFound("run_not_found", "Run not found.")

// NotFound is the answer for an unknown run id (a foreign one included).
func NotFound() error { return errNotFound }

// Event types of a run's stream: what happened, the state it left the run in being the event's state.
const (
	EventCreated           = "run.created"
	EventPreflightStarted  = "preflight.started"
	EventPlanReady         = "plan.ready"
	EventPreflightFailed   = "preflight.failed"
	EventApprovalRequested = "approval.requested"
	EventApprovalApproved  = "approval.approved"
	EventApprovalDenied    = "approval.denied"
	EventApprovalExpired   = "approval.expired"
	EventLaunchAllowed     = "launch.allowed"
	EventLaunchFailed      = "launch.failed"
	EventCampaignStarted   = "campaign.started"
	EventCampaignPaused    = "campaign.paused"
	EventCampaignResumed   = "campaign.resumed"
	EventCampaignCompleted = "campaign.completed"
	EventCampaignDeleted   = "campaign.deleted"
	EventCancelled         = "run.cancelled"
)

// change is one transition: where the run goes, and the event that tells it.
type change struct {
	to      string
	event   string
	message string
	data    map[string]any
}

// move applies c to run (locked by the caller, with the fields the transition sets already changed), appends
// the event to its stream and raises run.state_changed, all in tx. A move the state machine does not allow
// is an internal error: callers check the state first.
func (r *Runner) move(ctx context.Context, tx pgx.Tx, run *dbq.Run, c change) error {
	from := run.State
	if !slices.Contains(next[from], c.to) {
		return fmt.Errorf("runs: run %s cannot move from %s to %s", run.ID, from, c.to)
	}
	run.State = c.to
	saved, err := queries.RunSave(ctx, tx, dbq.RunSaveParams{OrganizationID: run.OrganizationID, ID: run.ID, State: run.State,
		CampaignID: run.CampaignID, FrozenSenderIds: nonNil(run.FrozenSenderIds), RecipientCount: run.RecipientCount,
		ActionCount: run.ActionCount, PolicyDecision: run.PolicyDecision, PreflightReport: run.PreflightReport,
		ErrorDetails: run.ErrorDetails, ApprovalID: run.ApprovalID, Now: r.now()})
	if err != nil {
		return err
	}
	*run = saved
	return r.record(ctx, tx, *run, from, c)
}

// record appends c's event to run's stream and raises run.state_changed (from "" for a new run).
func (r *Runner) record(ctx context.Context, tx pgx.Tx, run dbq.Run, from string, c change) error {
	data := c.data
	if data == nil {
		data = map[string]any{}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	if _, err := queries.RunEventAppend(ctx, tx, dbq.RunEventAppendParams{OrganizationID: run.OrganizationID, RunID: run.ID,
		ID: id, Type: c.event, State: run.State, Message: c.message, Data: raw, Now: r.now()}); err != nil {
		return err
	}
	_, err = r.outbox.Emit(ctx, tx, events.RunStateChanged, map[string]any{"run_id": run.ID, "state": run.State,
		"previous_state": from, "campaign_id": nullID(run.CampaignID), "approval_id": nullID(run.ApprovalID), "event": c.event})
	return err
}

// nullID is id as JSON: the uuid, or null.
func nullID(id uuid.NullUUID) any {
	if !id.Valid {
		return nil
	}
	return id.UUID
}

func nonNil(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}

// Issue is what error_details holds: a stable code, what went wrong for a person, and how to get past it.
type Issue struct {
	Code     string         `json:"code"`
	Message  string         `json:"message"`
	Fix      string         `json:"fix,omitempty"`
	Problems []PlanProblem  `json:"problems,omitempty"`
	Details  map[string]any `json:"details,omitempty"`
}

// issueOf keeps an API error's code, message and fix as the run's error details.
func issueOf(err error) Issue {
	e := apierror.From(err)
	return Issue{Code: e.Code, Message: e.Message, Fix: e.Fix}
}

// fail moves run to failed with issue as its error details, in tx.
func (r *Runner) fail(ctx context.Context, tx pgx.Tx, run *dbq.Run, event string, issue Issue) error {
	raw, err := json.Marshal(issue)
	if err != nil {
		return err
	}
	run.ErrorDetails = raw
	return r.move(ctx, tx, run, change{to: StateFailed, event: event, message: issue.Message, data: map[string]any{"code": issue.Code}})
}
