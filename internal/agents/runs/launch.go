package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// launchCapability is what a launch needs of a policy, and the action type of a launch's approval.
const launchCapability = policy.CampaignLaunch

// refusal reports whether err is a refusal a person can act on (an API error below 500) rather than trouble
// worth retrying.
func refusal(err error) bool {
	var e *apierror.Error
	return errors.As(err, &e) && e.Status < 500
}

// preflight takes a preflighting run (locked) to its outcome in tx. The campaign is built and planned in a
// savepoint: a draft, a blocking preflight, a refusal and a held launch roll it back (nothing of it stays),
// a launch the gate allows keeps it and starts it. Refusals fail the run; other errors roll everything back
// for the job to retry.
func (r *Runner) preflight(ctx context.Context, tx pgx.Tx, run *dbq.Run) error {
	var in Input
	if err := json.Unmarshal(run.Input, &in); err != nil {
		return fmt.Errorf("runs: decode input of %s: %w", run.ID, err)
	}
	p, issue, err := r.requester(ctx, tx, *run)
	if err != nil {
		return err
	}
	if issue != nil {
		return r.fail(ctx, tx, run, EventPreflightFailed, *issue)
	}
	// What the run does is done on behalf of its requester: the campaign and contacts it writes are theirs in
	// the audit log.
	ctx = auth.WithPrincipal(ctx, p)
	before := *run
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = sp.Rollback(context.WithoutCancel(ctx)) }()
	prep, plan, err := r.prepare(ctx, sp, run, in, p)
	if refusal(err) {
		return r.undo(ctx, sp, tx, run, before, func() error { return r.fail(ctx, tx, run, EventPreflightFailed, issueOf(err)) })
	}
	if err != nil {
		return err
	}
	if in.Intent == IntentDraft {
		return r.undo(ctx, sp, tx, run, *run, func() error {
			return r.move(ctx, tx, run, change{to: StateCompleted, event: EventPlanReady, message: planSummary(plan),
				data: map[string]any{"recipients": plan.Recipients, "first_send_at": plan.FirstSendAt}})
		})
	}
	if blocked := plan.Preflight.blocking(); len(blocked) > 0 {
		return r.undo(ctx, sp, tx, run, *run, func() error { return r.fail(ctx, tx, run, EventPreflightFailed, blockedIssue(blocked)) })
	}
	d, err := policy.Check(ctx, sp, p, policy.Action{Capability: launchCapability, Mailboxes: prep.frozen, Recipients: plan.Recipients}, r.now())
	if err != nil {
		return err
	}
	if run.PolicyDecision, err = json.Marshal(decisionJSON(d)); err != nil {
		return err
	}
	if !d.Allowed {
		return r.undo(ctx, sp, tx, run, *run, func() error { return r.hold(ctx, tx, run, p, in, plan, d) })
	}
	why := change{to: StateLaunching, event: EventLaunchAllowed, message: "The credential's agent policy allows the launch.",
		data: map[string]any{"policy_id": nullID(uuid.NullUUID{UUID: d.PolicyID, Valid: d.PolicyID != uuid.Nil})}}
	if d.Human {
		why.message = "A person started the run: a signed-in session is human-authorised."
	}
	kept := *run
	if err := r.launch(ctx, sp, run, prep, why); refusal(err) {
		return r.undo(ctx, sp, tx, run, kept, func() error { return r.fail(ctx, tx, run, EventLaunchFailed, issueOf(err)) })
	} else if err != nil {
		return err
	}
	return sp.Commit(ctx)
}

// undo rolls the savepoint back, puts run back as it was (keeping what was decided since: the plan, the
// decision) and then records the outcome in the outer transaction.
func (r *Runner) undo(ctx context.Context, sp, tx pgx.Tx, run *dbq.Run, keep dbq.Run, then func() error) error {
	if err := sp.Rollback(ctx); err != nil {
		return err
	}
	*run = keep
	return then()
}

// prepare builds the run's campaign in tx (a savepoint) and plans it, recording the plan, the frozen senders
// and the counts on run (not yet saved). An audience nobody would be mailed in is a blocking problem of the
// plan.
func (r *Runner) prepare(ctx context.Context, tx pgx.Tx, run *dbq.Run, in Input, p *auth.Principal) (prepared, Plan, error) {
	prep, err := r.build(ctx, tx, *run, in, p)
	if err != nil {
		return prep, Plan{}, err
	}
	plan, err := r.plan(ctx, tx, prep)
	if err != nil {
		return prep, Plan{}, err
	}
	if plan.Recipients == 0 {
		plan.Preflight.Passed = false
		plan.Preflight.Problems = append(plan.Preflight.Problems, PlanProblem{Check: "recipients", Severity: "error",
			Message:     fmt.Sprintf("Nobody would be mailed: of %d leads, every one is suppressed, unsubscribed or refused by verification.", plan.Audience.Leads),
			Remediation: "Add leads, contact_ids or segment_ids that reach people who may be mailed."})
	}
	raw, err := json.Marshal(plan)
	if err != nil {
		return prep, Plan{}, err
	}
	run.PreflightReport, run.FrozenSenderIds = raw, nonNil(prep.frozen)
	run.RecipientCount, run.ActionCount = int32(min(plan.Recipients, 1<<30)), int32(min(plan.Actions, 1<<30))
	return prep, plan, nil
}

// launch starts the prepared campaign through the campaign store (the sequence engine sends it from there):
// the run moves to launching (why), then to active with its campaign, and its sync job is inserted.
func (r *Runner) launch(ctx context.Context, tx pgx.Tx, run *dbq.Run, prep prepared, why change) error {
	org, id := run.OrganizationID, prep.campaign.ID
	run.CampaignID = uuid.NullUUID{UUID: id, Valid: true}
	if err := r.move(ctx, tx, run, why); err != nil {
		return err
	}
	c, err := r.store.Start(ctx, tx, org, id)
	if err != nil {
		return err
	}
	if err := r.move(ctx, tx, run, change{to: StateActive, event: EventCampaignStarted,
		message: fmt.Sprintf("The campaign %q started; the sequence engine sends it from %d mailboxes.", c.Name, len(run.FrozenSenderIds)),
		data:    map[string]any{"campaign_id": id}}); err != nil {
		return err
	}
	return r.watch(ctx, tx, org, run.ID)
}

// hold asks a person to approve a launch the gate refused: the approval (its payload the plan and the input,
// which the approver reviews and the executor re-checks) and the run awaiting it. The decision reaches the
// run through the executor and the decision hook.
func (r *Runner) hold(ctx context.Context, tx pgx.Tx, run *dbq.Run, p *auth.Principal, in Input, plan Plan, d policy.Decision) error {
	a, err := r.approvals.Create(ctx, tx, p, approvals.Request{ActionType: launchCapability, RunID: run.ID,
		Payload: map[string]any{"plan": plan, "input": in}, Decision: d,
		Summary: fmt.Sprintf("%q to %d recipients from %d mailboxes", plan.CampaignName, plan.Recipients, len(run.FrozenSenderIds))}, r.now())
	if err != nil {
		return err
	}
	run.ApprovalID = uuid.NullUUID{UUID: a.ID, Valid: true}
	url := approvals.URL(r.appURL, a.ID)
	if err := r.move(ctx, tx, run, change{to: StateAwaitingApproval, event: EventApprovalRequested,
		message: "The launch waits for a person's approval: " + strings.Join(d.Reasons, " "),
		data:    map[string]any{"approval_id": a.ID, "approval_url": url, "expires_at": a.ExpiresAt, "reasons": d.Reasons}}); err != nil {
		return err
	}
	return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "approval.requested", EntityType: audit.EntityApproval,
		EntityID: a.ID.String(), Metadata: map[string]any{"run_id": run.ID, "action_type": string(launchCapability), "reasons": d.Reasons}})
}

// requester is the principal a run acts for: the credential that created it, read again so a key revoked or
// expired since cannot launch (issue says so), with its scopes and mailbox limits as they are now.
func (r *Runner) requester(ctx context.Context, tx pgx.Tx, run dbq.Run) (*auth.Principal, *Issue, error) {
	p := &auth.Principal{Kind: auth.Kind(run.CredentialKind), CredentialID: run.CredentialID, OrganizationID: run.OrganizationID}
	if run.UserID.Valid {
		p.UserID = run.UserID.UUID
	}
	if p.Kind != auth.KindAPIKey {
		return p, nil, nil
	}
	key, err := queries.APIKeyGet(ctx, tx, dbq.APIKeyGetParams{OrganizationID: run.OrganizationID, ID: run.CredentialID})
	if errors.Is(err, pgx.ErrNoRows) || err == nil && (key.Status != "active" || key.ExpiresAt != nil && !r.now().Before(*key.ExpiresAt)) {
		return nil, &Issue{Code: "credential_revoked", Message: "The API key that started this run was revoked, deleted or expired before the run launched.",
			Fix: "Start the run again with a live key."}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	p.Permissions = auth.Permission(uint64(key.Permissions))
	if len(key.AllowedEmailAccounts) > 0 {
		p.AllowedMailboxes = key.AllowedEmailAccounts
	}
	return p, nil, nil
}

// decisionJSON is the gate's decision as the run's policy_decision shows it.
func decisionJSON(d policy.Decision) map[string]any {
	out := map[string]any{"allowed": d.Allowed, "human": d.Human, "reasons": nonNilStrings(d.Reasons)}
	if d.PolicyID != uuid.Nil {
		out["policy_id"] = d.PolicyID
	}
	return out
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// blockedIssue is the error details of a launch preflight stopped.
func blockedIssue(blocked []PlanProblem) Issue {
	msg := fmt.Sprintf("Preflight found %d problem(s) that stop the launch; the first: %s", len(blocked), blocked[0].Message)
	return Issue{Code: "preflight_failed", Message: msg, Fix: blocked[0].Remediation, Problems: blocked}
}

// planSummary says in one sentence what a draft found.
func planSummary(p Plan) string {
	s := fmt.Sprintf("Plan ready: %d recipients from %d mailboxes, %d emails a day", p.Recipients, len(p.Mailboxes), p.DailyCapacity)
	if p.FirstSendAt != nil {
		s += ", first sends at " + p.FirstSendAt.Format("2006-01-02 15:04 MST")
	}
	if !p.Preflight.Passed {
		s += "; preflight found problems that would stop a launch"
	}
	return s + "."
}
