package approvals_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/internal/trail/audit"
	"github.com/outflowhq/outflow/jobs"
)

type rig struct {
	d        *dbtest.DB
	s        *approvals.Service
	agent    *auth.Principal
	approver *auth.Principal
	heard    []string
}

func setup(t *testing.T) *rig {
	t.Helper()
	d := dbtest.New(t)
	boot, err := accounts.Bootstrap(context.Background(), d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	inserter, err := jobs.NewClient(jobs.Deps{Pool: d.Pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{})
	require.NoError(t, err)
	r := &rig{d: d, s: approvals.New(d.Pool, events.NewOutbox(inserter), "https://app.example/"),
		agent: &auth.Principal{Kind: auth.KindAPIKey, CredentialID: boot.APIKeyID, OrganizationID: boot.OrganizationID, UserID: boot.UserID},
		approver: &auth.Principal{Kind: auth.KindSession, CredentialID: uuid.New(), OrganizationID: boot.OrganizationID, UserID: boot.UserID,
			Role: auth.RoleOwner, OrgPermissions: auth.AllOrgPermissions}}
	r.s.OnDecided(policy.CampaignLaunch, func(_ context.Context, _ pgx.Tx, a dbq.Approval, _ time.Time) error {
		r.heard = append(r.heard, a.Status)
		return nil
	})
	return r
}

// hold creates an approval of a launch for the rig's agent.
func (r *rig) hold(t *testing.T) dbq.Approval {
	t.Helper()
	var a dbq.Approval
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.agent.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		a, err = r.s.Create(ctx, tx, r.agent, approvals.Request{ActionType: policy.CampaignLaunch, Payload: map[string]any{"plan": "ten leads"},
			Decision: policy.Decision{Reasons: []string{"The API key has no agent policy."}}, Summary: "Spring campaign"}, time.Now())
		return err
	}))
	return a
}

func (r *rig) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, r.d.OwnerPool(t).QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func TestURLPointsIntoTheWebApp(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	require.Equal(t, "https://app.example/approvals/"+id.String(), approvals.URL("https://app.example/", id))
	require.Equal(t, "https://app.example/approvals/"+id.String(), approvals.URL("https://app.example", id))
}

func TestCreateRefusesToHoldWhatTheGateAllowed(t *testing.T) {
	t.Parallel()
	r := setup(t)
	err := db.WithOrgTx(context.Background(), r.d.Pool, r.agent.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		_, err := r.s.Create(ctx, tx, r.agent, approvals.Request{ActionType: policy.CampaignLaunch, Payload: map[string]any{},
			Decision: policy.Decision{Allowed: true}}, time.Now())
		return err
	})
	require.Error(t, err)
}

func TestAHardGatesRefusalLeavesNothingOfTheAttemptAndTheApprovalApproved(t *testing.T) {
	t.Parallel()
	r := setup(t)
	r.s.Register(policy.CampaignLaunch, func(ctx context.Context, tx pgx.Tx, a dbq.Approval, _ *auth.Principal, _ time.Time) (map[string]any, error) {
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "campaign.created", EntityType: audit.EntityCampaign,
			EntityID: a.ID.String()}); err != nil {
			return nil, err
		}
		return nil, apierror.Conflict("mailbox_inactive", "The mailbox is paused.")
	})
	a := r.hold(t)
	got, err := r.s.Decide(context.Background(), r.approver, a.ID, true, "", time.Now())
	require.NoError(t, err)
	require.Equal(t, approvals.StatusApproved, got.Status)
	require.Nil(t, got.ExecutedAt)
	require.JSONEq(t, `{"error":{"code":"mailbox_inactive","message":"The mailbox is paused."}}`, string(got.Result))
	require.Zero(t, r.count(t, `SELECT count(*) FROM audit_log WHERE event = 'campaign.created'`), "the attempt's writes rolled back")
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM audit_log WHERE action = 'approve' AND target_id = $1`, a.ID.String()))
	require.Equal(t, []string{approvals.StatusApproved}, r.heard)
}

func TestAFailingExecutorFailsTheDecisionAndTheApprovalStaysPending(t *testing.T) {
	t.Parallel()
	r := setup(t)
	r.s.Register(policy.CampaignLaunch, func(context.Context, pgx.Tx, dbq.Approval, *auth.Principal, time.Time) (map[string]any, error) {
		return nil, context.DeadlineExceeded
	})
	a := r.hold(t)
	_, err := r.s.Decide(context.Background(), r.approver, a.ID, true, "", time.Now())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM approvals WHERE id = $1 AND status = 'pending'`, a.ID))
	require.Empty(t, r.heard)
}

func TestHooksHearApprovalsDenialsAndExpiriesButNotWithdrawals(t *testing.T) {
	t.Parallel()
	r := setup(t)
	ctx := context.Background()
	r.s.Register(policy.CampaignLaunch, func(context.Context, pgx.Tx, dbq.Approval, *auth.Principal, time.Time) (map[string]any, error) {
		return map[string]any{"campaign_id": "c1"}, nil
	})
	approved, denied, expired, withdrawn := r.hold(t), r.hold(t), r.hold(t), r.hold(t)
	got, err := r.s.Decide(ctx, r.approver, approved.ID, true, "", time.Now())
	require.NoError(t, err)
	require.Equal(t, approvals.StatusExecuted, got.Status)
	require.JSONEq(t, `{"campaign_id":"c1"}`, string(got.Result))
	_, err = r.s.Decide(ctx, r.approver, denied.ID, false, "Not now.", time.Now())
	require.NoError(t, err)
	got, err = r.s.Expire(ctx, expired.OrganizationID, expired.ID, expired.ExpiresAt)
	require.NoError(t, err)
	require.Equal(t, approvals.StatusExpired, got.Status)

	var ok bool
	require.NoError(t, db.WithOrgTx(ctx, r.d.Pool, withdrawn.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		ok, err = r.s.Withdraw(ctx, tx, withdrawn.OrganizationID, withdrawn.ID, "The run was cancelled.", time.Now())
		return err
	}))
	require.True(t, ok)
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM approvals WHERE id = $1 AND status = 'denied' AND decided_by IS NULL
		AND decision_reason = 'The run was cancelled.'`, withdrawn.ID))
	require.NoError(t, db.WithOrgTx(ctx, r.d.Pool, withdrawn.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		ok, err = r.s.Withdraw(ctx, tx, withdrawn.OrganizationID, approved.ID, "Too late.", time.Now())
		return err
	}))
	require.False(t, ok, "a decided approval is left alone")

	require.Equal(t, []string{approvals.StatusExecuted, approvals.StatusDenied, approvals.StatusExpired}, r.heard)
	require.Equal(t, 4, r.count(t, `SELECT count(*) FROM event_outbox WHERE event_type = 'approval.decided'`))
	require.Equal(t, 4, r.count(t, `SELECT count(*) FROM event_outbox WHERE event_type = 'approval.requested'
		AND data->>'approval_url' LIKE 'https://app.example/approvals/%'`))
}
