package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/truncate"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// MaxReason is the longest decision reason (the approvals CHECK holds the same).
const MaxReason = 1000

var errNotFound = apierror.NotFound("approval_not_found", "Approval not found.")

// Decide records approver's decision on approval id at now: approve acts through the action type's Executor
// in the same transaction, deny records reason. An unknown approval is 404 approval_not_found, a decided one
// 409 approval_already_decided; one whose time ran out is marked expired (approval.decided is raised) and
// answers 409 approval_expired.
func (s *Service) Decide(ctx context.Context, approver *auth.Principal, id uuid.UUID, approve bool, reason string, now time.Time) (dbq.Approval, error) {
	if utf8.RuneCountInString(reason) > MaxReason {
		return dbq.Approval{}, apierror.BadRequest("invalid_reason", fmt.Sprintf("reason is at most %d characters.", MaxReason))
	}
	now = now.UTC().Truncate(time.Microsecond)
	status := StatusDenied
	if approve {
		status = StatusApproved
	}
	var out dbq.Approval
	var refused error // answered after the transaction commits (an expiry is recorded all the same)
	err := db.WithOrgTx(ctx, s.pool, approver.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		a, err := queries.ApprovalDecide(ctx, tx, dbq.ApprovalDecideParams{Status: status, DecidedBy: nullID(approver.UserID),
			DecisionReason: reason, Now: now, OrganizationID: approver.OrganizationID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			out, refused, err = s.undecidable(ctx, tx, approver.OrganizationID, id, now)
			return err
		}
		if err != nil {
			return fmt.Errorf("approvals: decide: %w", err)
		}
		if approve {
			if a, err = s.execute(ctx, tx, a, approver, now); err != nil {
				return err
			}
		}
		if err := s.decided(ctx, tx, a, approver.UserID, now, false); err != nil {
			return err
		}
		action := audit.ActionDeny
		if approve {
			action = audit.ActionApprove
		}
		out = a
		return audit.Record(ctx, tx, audit.Entry{Action: action, Event: string(events.ApprovalDecided), EntityType: audit.EntityApproval,
			EntityID: a.ID.String(), Metadata: map[string]any{"action_type": a.ActionType, "status": a.Status, "reason": reason,
				"requester_kind": a.CredentialKind, "requester_id": a.CredentialID, "result": json.RawMessage(resultOr(a.Result))}})
	})
	if err != nil {
		return dbq.Approval{}, err
	}
	return out, refused
}

// undecidable explains why approval id of org could not be decided at now: not found, decided, or expired (then
// it is marked so here, and its approval is returned with the refusal).
func (s *Service) undecidable(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, now time.Time) (dbq.Approval, error, error) {
	a, err := queries.ApprovalGet(ctx, tx, dbq.ApprovalGetParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return a, nil, errNotFound
	}
	if err != nil {
		return a, nil, fmt.Errorf("approvals: read: %w", err)
	}
	switch a.Status {
	case StatusPending: // it expired at now: the decision's update leaves only that
		if a, _, err = s.expireTx(ctx, tx, a, now); err != nil {
			return a, nil, err
		}
		return a, expired(a), nil
	case StatusExpired:
		return a, nil, expired(a)
	}
	return a, nil, apierror.Conflict("approval_already_decided", fmt.Sprintf("The approval was already decided: it is %s.", a.Status))
}

func expired(a dbq.Approval) error {
	return apierror.Conflict("approval_expired", fmt.Sprintf("The approval expired at %s, before anyone decided it; the agent has to ask again.",
		a.ExpiresAt.UTC().Format(time.RFC3339)))
}

// execute acts on approved a through its action type's executor, in a savepoint so that a hard gate's refusal
// leaves nothing of the attempt behind, and records the outcome: executed with the result, or still approved
// with the refusal as result.error.
func (s *Service) execute(ctx context.Context, tx pgx.Tx, a dbq.Approval, approver *auth.Principal, now time.Time) (dbq.Approval, error) {
	run, ok := s.executor(a)
	if !ok {
		return a, fmt.Errorf("approvals: no executor for %s", a.ActionType)
	}
	var result map[string]any
	err := db.WithTx(ctx, tx, func(ctx context.Context, sp pgx.Tx) error {
		var err error
		result, err = run(ctx, sp, a, approver, now)
		return err
	})
	status, executedAt := StatusExecuted, &now
	var refusal *apierror.Error
	switch {
	case errors.As(err, &refusal) && refusal.Status < 500:
		status, executedAt = StatusApproved, nil
		result = map[string]any{"error": map[string]any{"code": refusal.Code, "message": refusal.Message}}
	case err != nil:
		return a, err
	}
	raw, err := json.Marshal(result)
	if err != nil {
		return a, fmt.Errorf("approvals: encode result: %w", err)
	}
	a, err = queries.ApprovalFinish(ctx, tx, dbq.ApprovalFinishParams{Status: status, ExecutedAt: executedAt, Result: raw, Now: now,
		OrganizationID: a.OrganizationID, ID: a.ID})
	if err != nil {
		return a, fmt.Errorf("approvals: record result: %w", err)
	}
	return a, nil
}

// decided lets a's action type's hook hear of the decision (unless the decision came from the action's own
// owner, withdrawing it), raises approval.decided and tells the person behind the requesting credential
// (unless they decided it themselves).
func (s *Service) decided(ctx context.Context, tx pgx.Tx, a dbq.Approval, decider uuid.UUID, now time.Time, withdrawn bool) error {
	if h := s.hook(a.ActionType); h != nil && !withdrawn {
		if err := h(ctx, tx, a, now); err != nil {
			return err
		}
	}
	if _, err := s.outbox.Emit(ctx, tx, events.ApprovalDecided, map[string]any{"approval_id": a.ID, "action_type": a.ActionType,
		"run_id": runID(a), "status": a.Status, "reason": a.DecisionReason, "result": json.RawMessage(resultOr(a.Result))}); err != nil {
		return err
	}
	if !a.RequestedByUserID.Valid || a.RequestedByUserID.UUID == decider {
		return nil
	}
	outcome := a.Status
	if a.Status == StatusApproved { // approved, but a hard gate stopped it
		outcome = "approved but not carried out"
	}
	return s.notifier.NotifyTx(ctx, tx, notify.Event{UserID: a.RequestedByUserID.UUID, OrganizationID: a.OrganizationID,
		Category: notify.TeamActivity, Title: truncate.Chars("Your agent's request to "+verb(policyOf(a))+" was "+outcome, 200),
		Body: truncate.Chars(a.DecisionReason, 1000), Link: s.URL(a.ID)})
}

// Withdraw denies pending approval id of org in tx at now without a person (decided_by stays empty), with
// reason: what a run's cancellation does to the approval it waits for ("The run was cancelled."). It raises
// approval.decided (the action type's hook is not called: its caller is the one withdrawing) and reports
// whether the approval was still pending; a decided or expired one is left alone.
func (s *Service) Withdraw(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, reason string, now time.Time) (bool, error) {
	now = now.UTC().Truncate(time.Microsecond)
	a, err := queries.ApprovalDecide(ctx, tx, dbq.ApprovalDecideParams{Status: StatusDenied, DecisionReason: truncate.Chars(reason, MaxReason),
		Now: now, OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("approvals: withdraw: %w", err)
	}
	return true, s.decided(ctx, tx, a, uuid.Nil, now, true)
}

// Expire marks approval id of org expired when its time ran out at now and raises approval.decided; it
// returns the approval as it is after the call (still pending when its time has not come, unchanged when it
// was decided).
func (s *Service) Expire(ctx context.Context, org, id uuid.UUID, now time.Time) (dbq.Approval, error) {
	var out dbq.Approval
	err := db.WithOrgTx(ctx, s.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		a, err := queries.ApprovalGet(ctx, tx, dbq.ApprovalGetParams{OrganizationID: org, ID: id})
		if err != nil {
			return err
		}
		out, _, err = s.expireTx(ctx, tx, a, now)
		return err
	})
	return out, err
}

// expireTx marks a expired in tx when it is pending and its time ran out at now, raising approval.decided;
// changed says whether it did.
func (s *Service) expireTx(ctx context.Context, tx pgx.Tx, a dbq.Approval, now time.Time) (_ dbq.Approval, changed bool, _ error) {
	done, err := queries.ApprovalExpire(ctx, tx, dbq.ApprovalExpireParams{Now: now, OrganizationID: a.OrganizationID, ID: a.ID})
	if errors.Is(err, pgx.ErrNoRows) {
		return a, false, nil
	}
	if err != nil {
		return a, false, fmt.Errorf("approvals: expire: %w", err)
	}
	return done, true, s.decided(ctx, tx, done, uuid.Nil, now, false)
}

// ExpireArgs is the job that expires one approval, scheduled at its expiry when it is created. Being
// organization-scoped, it needs no sweep across organizations.
type ExpireArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	ApprovalID     uuid.UUID `json:"approval_id"`
}

// Kind names the job in River.
func (ExpireArgs) Kind() string { return "approval_expire" }

// InsertOpts keeps one expiry job per approval.
func (ExpireArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// ExpireWorker expires an approval at its time; a decided one is left alone, and one whose time has not come
// (the job ran early) is snoozed until it has.
type ExpireWorker struct {
	river.WorkerDefaults[ExpireArgs]
	Service *Service
}

// Work expires the job's approval.
func (w *ExpireWorker) Work(ctx context.Context, job *river.Job[ExpireArgs]) error {
	now := time.Now()
	a, err := w.Service.Expire(ctx, job.Args.OrganizationID, job.Args.ApprovalID, now)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // its organization or run is gone
	}
	if err != nil {
		return err
	}
	if a.Status == StatusPending {
		return river.JobSnooze(a.ExpiresAt.Sub(now) + time.Second)
	}
	return nil
}

// resultOr is a's result, or JSON null when it has none.
func resultOr(raw []byte) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	return raw
}
