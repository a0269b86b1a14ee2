package handlers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// heldRun creates a launch with the rig's full-access key, which has no agent policy, and waits for it to ask
// a person.
func (r *runRig) heldRun(t *testing.T, body *api.CreateOutboundRun) *api.OutboundRunDetail {
	t.Helper()
	run := createRun(t, r.c, body)
	held := awaitRun(t, r.c, run.ID, inState(api.RunStateAwaitingApproval, api.RunStateFailed, api.RunStateActive))
	require.Equal(t, api.RunStateAwaitingApproval, held.State, "%+v", held.ErrorDetails)
	return held
}

// approvalOf is the approval a held run waits for, as the approvals list shows it to the session.
func (r *runRig) approvalOf(t *testing.T, run *api.OutboundRunDetail) api.SendApproval {
	t.Helper()
	list, err := r.session.ApprovalsList(context.Background())
	require.NoError(t, err)
	for _, a := range list.Data {
		if a.RunID.Value == run.ID {
			return a
		}
	}
	t.Fatalf("no approval for run %s", run.ID)
	return api.SendApproval{}
}

func (r *runRig) decide(t *testing.T, id uuid.UUID, d api.ApprovalsDecideReqDecision, reason string) *api.SendApproval {
	t.Helper()
	req := &api.ApprovalsDecideReq{Decision: d}
	if reason != "" {
		req.Reason = api.NewOptString(reason)
	}
	a, err := r.session.ApprovalsDecide(context.Background(), req, api.ApprovalsDecideParams{ID: id})
	require.NoError(t, err)
	return a
}

func TestRunByAKeyWithoutAPolicyWaitsForAPersonAndLaunchesOnApproval(t *testing.T) {
	t.Parallel()
	r := newRunRig(t)
	ctx := context.Background()
	r.env.StartWorkers(t)
	body := r.launchBody(t)
	contacts := orgCount(t, r.env, r.org, "contacts")

	held := r.heldRun(t, body)
	require.Equal(t, []api.RunState{api.RunStateQueued, api.RunStatePreflighting, api.RunStateAwaitingApproval}, story(held))
	require.True(t, held.ApprovalURL.Set)
	require.True(t, strings.HasPrefix(held.ApprovalURL.Value.String(), strings.TrimRight(r.env.Config.AppURL, "/")+"/approvals/"))
	require.False(t, jsonBool(t, held.PolicyDecision["allowed"]))
	require.Contains(t, string(held.PolicyDecision["reasons"]), "policy")
	require.Equal(t, 2, reportField[int](t, held, "recipients"), "the plan is ready for the person deciding")
	// Held means nothing was done: no campaign, no new contact, no lead, nothing counted, nothing sent.
	require.False(t, held.CampaignID.Set)
	require.Zero(t, orgCount(t, r.env, r.org, "campaigns"))
	require.Equal(t, contacts, orgCount(t, r.env, r.org, "contacts"))
	require.Zero(t, orgCount(t, r.env, r.org, "campaign_leads"))

	// The person sees the same plan, and the request, in the approval.
	a := r.approvalOf(t, held)
	require.Equal(t, api.SendApprovalStatusPending, a.Status.Value)
	require.Equal(t, api.SendApprovalActionTypeCampaignLaunch, a.ActionType.Value)
	var plan struct {
		Recipients int `json:"recipients"`
	}
	require.NoError(t, json.Unmarshal(a.Payload.Value["plan"], &plan))
	require.Equal(t, 2, plan.Recipients)
	require.Contains(t, string(a.Payload.Value["input"]), "Spring outreach")
	require.Equal(t, held.ApprovalURL.Value, a.ApprovalURL.Value)

	// Approving launches at once, in the decision: the run is active before the call returns.
	got := r.decide(t, a.ID.Value, api.ApprovalsDecideReqDecisionApproved, "")
	require.Equal(t, api.SendApprovalStatusExecuted, got.Status.Value, "%s", got.Result.Value)
	run, err := r.c.RunsGet(ctx, api.RunsGetParams{ID: held.ID})
	require.NoError(t, err)
	require.Equal(t, api.RunStateActive, run.State)
	require.Equal(t, []api.RunState{api.RunStateQueued, api.RunStatePreflighting, api.RunStateAwaitingApproval,
		api.RunStatePreflighting, api.RunStateLaunching, api.RunStateActive}, story(run))
	require.Equal(t, "approval.approved", run.Events[3].Type)
	var campaignID uuid.UUID
	require.NoError(t, json.Unmarshal(got.Result.Value["campaign_id"], &campaignID))
	require.Equal(t, run.CampaignID.Value, campaignID)
	require.True(t, jsonBool(t, run.PolicyDecision["human"]))

	require.Eventually(t, func() bool { return r.smtp.Count() == 2 }, time.Minute, 100*time.Millisecond)
	require.Zero(t, orgCount(t, r.env, r.org, "agent_policy_usage"), "a launch a person approved counts against no policy")
}

func TestRunApprovalDeniedRefusedOnApprovalOrWithdrawnEndsTheRun(t *testing.T) {
	t.Parallel()
	r := newRunRig(t)
	ctx := context.Background()
	r.env.StartWorkers(t)
	body := r.launchBody(t)
	denied, refused, waiting := r.heldRun(t, body), r.heldRun(t, body), r.heldRun(t, body)

	// Denied: the run is denied in the same decision, with the person's reason.
	r.decide(t, r.approvalOf(t, denied).ID.Value, api.ApprovalsDecideReqDecisionDenied, "Not this week.")
	run, err := r.c.RunsGet(ctx, api.RunsGetParams{ID: denied.ID})
	require.NoError(t, err)
	require.Equal(t, api.RunStateDenied, run.State)
	last := run.Events[len(run.Events)-1]
	require.Equal(t, "approval.denied", last.Type)
	require.Contains(t, last.Message.Value, "Not this week.")

	// Refused when acted on: everyone was suppressed since, so preflight stops the approved launch.
	_, err = r.c.DeliverabilityOpsAddSuppressions(ctx, &api.AddSuppressionsRequest{Entries: suppressionEntries(prospects)})
	require.NoError(t, err)
	got := r.decide(t, r.approvalOf(t, refused).ID.Value, api.ApprovalsDecideReqDecisionApproved, "")
	require.Equal(t, api.SendApprovalStatusApproved, got.Status.Value, "a hard gate's refusal leaves the approval approved")
	run, err = r.c.RunsGet(ctx, api.RunsGetParams{ID: refused.ID})
	require.NoError(t, err)
	require.Equal(t, api.RunStateFailed, run.State)
	var code string
	require.NoError(t, json.Unmarshal(run.ErrorDetails.Value["code"], &code))
	require.Equal(t, "preflight_failed", code)
	require.Zero(t, orgCount(t, r.env, r.org, "campaigns"), "the refused attempt kept nothing")

	// Cancelled while waiting: the approval is withdrawn as denied, with the reason.
	cancelled, err := r.c.RunsCancel(ctx, api.RunsCancelParams{ID: waiting.ID})
	require.NoError(t, err)
	require.Equal(t, api.RunStateCancelled, cancelled.State)
	a := r.approvalOf(t, waiting)
	require.Equal(t, api.SendApprovalStatusDenied, a.Status.Value)
	require.Equal(t, "The run was cancelled.", a.DecisionReason.Value)
	_, err = r.session.ApprovalsDecide(ctx, &api.ApprovalsDecideReq{Decision: api.ApprovalsDecideReqDecisionApproved},
		api.ApprovalsDecideParams{ID: a.ID.Value})
	requireAPIError(t, err, 409, "approval_already_decided")
	require.Zero(t, r.smtp.Count())
}

func TestRunByAKeyUnderItsPolicyLaunchesWithoutAPersonWithinItsLimits(t *testing.T) {
	t.Parallel()
	r := newRunRig(t)
	ctx := context.Background()
	r.env.StartWorkers(t)
	key := newKey(t, r.session, api.CreateAPIKey{Name: "agent", Permissions: int64(auth.ReadRuns | auth.WriteRuns | auth.ExecuteRuns)})
	agent := r.env.Client(t, key.Secret)
	pol, err := r.session.AgentPoliciesCreate(ctx, &api.AgentPolicy{Name: "Outreach agent", APIKeyID: api.NewOptUUID(key.ID),
		Capabilities: []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemCampaignLaunch}, MailboxIds: []uuid.UUID{r.box.ID},
		MaxRecipientsPerRun: 2, MaxRecipientsPerDay: 10, MaxActionsPerDay: 5, ExpiresAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)

	// Within the policy: launched by the agent alone, counted against the policy's day.
	run := createRun(t, agent, r.launchBody(t))
	active := awaitRun(t, r.c, run.ID, inState(api.RunStateActive, api.RunStateAwaitingApproval, api.RunStateFailed))
	require.Equal(t, api.RunStateActive, active.State, "%+v %+v", active.PolicyDecision, active.ErrorDetails)
	require.True(t, jsonBool(t, active.PolicyDecision["allowed"]))
	require.False(t, jsonBool(t, active.PolicyDecision["human"]))
	require.Contains(t, string(active.PolicyDecision["policy_id"]), pol.ID.Value.String())
	require.Contains(t, active.Events[2].Message.Value, "agent policy")
	used := func() (recipients, actions int) {
		t.Helper()
		require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT recipients, actions FROM agent_policy_usage WHERE policy_id = $1", pol.ID.Value).Scan(&recipients, &actions)
		}))
		return recipients, actions
	}
	recipients, actions := used()
	require.Equal(t, []int{2, 1}, []int{recipients, actions})
	require.Eventually(t, func() bool { return r.smtp.Count() == 2 }, time.Minute, 100*time.Millisecond)

	// Past max_recipients_per_run: the next launch waits for a person and counts nothing.
	body := r.launchBody(t)
	body.Leads = append(body.Leads, api.RunLead{Email: "lin@" + prospects, FirstName: api.NewOptString("Lin")})
	held := awaitRun(t, r.c, createRun(t, agent, body).ID, inState(api.RunStateAwaitingApproval, api.RunStateActive, api.RunStateFailed))
	require.Equal(t, api.RunStateAwaitingApproval, held.State, "%+v", held.ErrorDetails)
	require.False(t, jsonBool(t, held.PolicyDecision["allowed"]))
	require.Contains(t, string(held.PolicyDecision["reasons"]), "recipients")
	recipients, actions = used()
	require.Equal(t, []int{2, 1}, []int{recipients, actions})
}
