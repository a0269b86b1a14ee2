package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// cancelReason is the decision reason of an approval its run's cancel withdrew.
const cancelReason = "The run was cancelled."

// executeApproved is the campaign.launch executor: approver approved a, so the run it holds is preflighted
// again at once (the campaign rebuilt from the run's input with the requester's mailbox scope, every check
// and hard gate run again; no policy is counted, a person decided) and launched. A refusal (a blocking
// preflight, a campaign the store will not start) is answered as an API error: the approvals service rolls
// this attempt back and keeps the refusal as the approval's result, and decided (the hook) fails the run
// with it.
func (r *Runner) executeApproved(ctx context.Context, tx pgx.Tx, a dbq.Approval, approver *auth.Principal, _ time.Time) (map[string]any, error) {
	if !a.RunID.Valid {
		return nil, fmt.Errorf("runs: approval %s holds no run", a.ID)
	}
	run, err := lock(ctx, tx, a.OrganizationID, a.RunID.UUID)
	if err != nil {
		return nil, err
	}
	if run.State != StateAwaitingApproval || run.ApprovalID.UUID != a.ID {
		return nil, apierror.Conflict("run_not_awaiting_approval", fmt.Sprintf("The run is %s and no longer waits for this approval.", run.State))
	}
	var in Input
	if err := json.Unmarshal(run.Input, &in); err != nil {
		return nil, fmt.Errorf("runs: decode input of %s: %w", run.ID, err)
	}
	p, issue, err := r.requester(ctx, tx, run)
	if err != nil {
		return nil, err
	}
	if issue != nil {
		return nil, apierror.BadRequest(issue.Code, issue.Message)
	}
	if err := r.move(ctx, tx, &run, change{to: StatePreflighting, event: EventApprovalApproved,
		message: "A person approved the launch; preflight and every hard gate run again before it starts.",
		data:    map[string]any{"approval_id": a.ID, "approved_by": approver.UserID}}); err != nil {
		return nil, err
	}
	prep, plan, err := r.prepare(ctx, tx, &run, in, p)
	if err != nil {
		return nil, err
	}
	if blocked := plan.Preflight.blocking(); len(blocked) > 0 {
		issue := blockedIssue(blocked)
		return nil, apierror.BadRequest(issue.Code, issue.Message)
	}
	run.PolicyDecision, err = json.Marshal(map[string]any{"allowed": true, "human": true, "approval_id": a.ID, "reasons": nonNilStrings(a.Reasons)})
	if err != nil {
		return nil, err
	}
	if err := r.launch(ctx, tx, &run, prep, change{to: StateLaunching, event: EventLaunchAllowed,
		message: "The approved launch passed preflight and every hard gate again.", data: map[string]any{"approval_id": a.ID}}); err != nil {
		return nil, err
	}
	return map[string]any{"run_id": run.ID, "campaign_id": run.CampaignID.UUID, "recipients": plan.Recipients}, nil
}

// decided is the campaign.launch approvals' decision hook, in the deciding transaction: a denial or an expiry
// denies the waiting run; an approval a hard gate refused when acted on (still approved, its result the
// refusal) fails it with that refusal. An executed approval already launched the run (the executor moved it).
func (r *Runner) decided(ctx context.Context, tx pgx.Tx, a dbq.Approval, _ time.Time) error {
	if !a.RunID.Valid {
		return nil
	}
	run, err := lock(ctx, tx, a.OrganizationID, a.RunID.UUID)
	if err != nil || run.State != StateAwaitingApproval || run.ApprovalID.UUID != a.ID {
		return ignoreGone(err)
	}
	data := map[string]any{"approval_id": a.ID}
	switch a.Status {
	case approvals.StatusDenied:
		data["reason"] = a.DecisionReason
		msg := "A person denied the launch."
		if a.DecisionReason != "" {
			msg = "A person denied the launch: " + a.DecisionReason
		}
		return r.move(ctx, tx, &run, change{to: StateDenied, event: EventApprovalDenied, message: msg, data: data})
	case approvals.StatusExpired:
		return r.move(ctx, tx, &run, change{to: StateDenied, event: EventApprovalExpired, data: data,
			message: fmt.Sprintf("Nobody decided the launch within %s; the approval expired.", approvals.ExpiresAfter)})
	case approvals.StatusApproved:
		var res struct {
			Error *Issue `json:"error"`
		}
		if json.Unmarshal(a.Result, &res) != nil || res.Error == nil {
			return nil
		}
		res.Error.Message = "The launch was approved, but checking it again refused it: " + res.Error.Message
		return r.fail(ctx, tx, &run, EventLaunchFailed, *res.Error)
	}
	return nil
}

// sync brings a launched run in line with its campaign, once, and reports whether the run has ended (the
// job stops then): the campaign's status is followed (active, paused, completed), and a deleted campaign
// fails the run.
func (r *Runner) sync(ctx context.Context, a SyncArgs) (bool, error) {
	done := false
	err := db.WithOrgTx(ctx, r.pool, a.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		run, err := lock(ctx, tx, a.OrganizationID, a.RunID)
		if errors.Is(err, NotFound()) {
			done = true
			return nil
		}
		if err != nil {
			return err
		}
		if run.State == StateActive || run.State == StatePaused {
			err = r.syncCampaign(ctx, tx, &run)
		}
		done = Final(run.State)
		return err
	})
	return done, err
}

func (r *Runner) syncCampaign(ctx context.Context, tx pgx.Tx, run *dbq.Run) error {
	status, err := queries.RunCampaignStatus(ctx, tx, dbq.RunCampaignStatusParams{OrganizationID: run.OrganizationID, ID: run.CampaignID.UUID})
	if errors.Is(err, pgx.ErrNoRows) {
		return r.fail(ctx, tx, run, EventCampaignDeleted, Issue{Code: "campaign_deleted", Message: "The run's campaign was deleted."})
	}
	if err != nil {
		return err
	}
	data := map[string]any{"campaign_id": run.CampaignID.UUID, "campaign_status": status}
	switch {
	case status == campaign.StatusCompleted:
		return r.move(ctx, tx, run, change{to: StateCompleted, event: EventCampaignCompleted, data: data,
			message: "The campaign completed: every lead finished its sequence."})
	case status == campaign.StatusActive && run.State == StatePaused:
		return r.move(ctx, tx, run, change{to: StateActive, event: EventCampaignResumed, data: data, message: "The campaign sends again."})
	case status != campaign.StatusActive && run.State == StateActive:
		return r.move(ctx, tx, run, change{to: StatePaused, event: EventCampaignPaused, data: data,
			message: fmt.Sprintf("The campaign is %s, so the run is paused.", status)})
	}
	return nil
}
