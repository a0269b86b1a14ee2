package handlers_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/jobs"
)

// agentRig is an inbox rig with an agent: a full-access API key the owner made, bound to no policy until a
// test grants one.
type agentRig struct {
	*inboxRig
	agentKey *api.APIKeyWithSecret
	agent    *api.Client
}

func newAgentRig(t *testing.T) *agentRig {
	t.Helper()
	r := &agentRig{inboxRig: newInboxRig(t)}
	r.agentKey = newKey(t, r.session, api.CreateAPIKey{Name: "agent", Permissions: int64(auth.FullAccess),
		RateLimitPerMinute: api.NewOptInt(auth.MaxRateLimitPerMinute)})
	r.agent = r.env.Client(t, r.agentKey.Secret)
	return r
}

// grant binds a policy to the agent key through the owner's session: email.compose and inbox.reply from the
// rig's mailbox, 3 recipients a run, 5 a day, 3 actions a day, a day to live; change adjusts it first.
func (r *agentRig) grant(t *testing.T, change func(*api.AgentPolicy)) *api.AgentPolicy {
	t.Helper()
	p := &api.AgentPolicy{Name: "agent", APIKeyID: api.NewOptUUID(r.agentKey.ID),
		Capabilities: []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemEmailCompose, api.AgentPolicyCapabilitiesItemInboxReply},
		MailboxIds:   []uuid.UUID{r.box.ID}, MaxRecipientsPerRun: 3, MaxRecipientsPerDay: 5, MaxActionsPerDay: 3,
		ExpiresAt: time.Now().Add(24 * time.Hour).Truncate(time.Second)}
	if change != nil {
		change(p)
	}
	out, err := r.session.AgentPoliciesCreate(context.Background(), p)
	require.NoError(t, err)
	return out
}

// directSend is a direct send from the rig's mailbox to to.
func (r *agentRig) directSend(t *testing.T, c *api.Client, subject string, to ...string) api.MailboxesSendRes {
	t.Helper()
	res, err := c.MailboxesSend(context.Background(), &api.MailboxSendRequest{To: to, Subject: subject, BodyPlain: api.NewOptString("Hello there.")},
		api.MailboxesSendParams{ID: r.box.ID})
	require.NoError(t, err)
	return res
}

// held is a 202 answer's approval id, failing the test on a 200.
func held(t *testing.T, res api.MailboxesSendRes) *api.MailboxesSendAccepted {
	t.Helper()
	acc, ok := res.(*api.MailboxesSendAccepted)
	require.True(t, ok, "want 202 awaiting_approval, got %T", res)
	require.Equal(t, api.MailboxSendResultResultAwaitingApproval, acc.Result)
	require.False(t, acc.TaskID.Set, "nothing is queued")
	return acc
}

func (r *agentRig) decide(t *testing.T, id uuid.UUID, decision api.ApprovalsDecideReqDecision, reason string) (*api.SendApproval, error) {
	t.Helper()
	req := &api.ApprovalsDecideReq{Decision: decision}
	if reason != "" {
		req.Reason = api.NewOptString(reason)
	}
	return r.session.ApprovalsDecide(context.Background(), req, api.ApprovalsDecideParams{ID: id})
}

func (r *agentRig) count(t *testing.T, sql string, args ...any) int64 {
	t.Helper()
	return orgInt(t, r.env, r.org, sql, args...)
}

// resultField reads one field of an approval's result.
func resultField(t *testing.T, a *api.SendApproval, key string, out any) {
	t.Helper()
	raw, ok := a.Result.Value[key]
	require.True(t, ok, "result has %s: %v", key, a.Result.Value)
	require.NoError(t, json.Unmarshal(raw, out))
}

func TestAnAPIKeyWithoutAPolicyWaitsForApprovalOnEverySendAndNothingIsQueued(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t)
	ctx := context.Background()
	thread, _ := r.thread(t, r.box.ID, "Pricing", stored{messageID: "<root@client.example>"})
	start := time.Now()
	noPolicy := []string{"The API key has no agent policy."}
	link := func(id uuid.UUID) string {
		return strings.TrimRight(r.env.Config.AppURL, "/") + "/approvals/" + id.String()
	}

	direct := held(t, r.directSend(t, r.agent, "Hello Carol", "carol@client.example", "dan@client.example"))
	require.Equal(t, noPolicy, direct.Reasons)
	require.Equal(t, link(direct.ApprovalID.Value), direct.ApprovalURL.Value.String())
	require.WithinDuration(t, start.Add(30*time.Minute), direct.ExpiresAt.Value, 10*time.Second)

	res, err := r.agent.UniboxCompose(ctx, &api.UniboxComposeRequest{EmailAccountID: r.box.ID, To: []string{"erin@client.example"}, Subject: "Hi Erin",
		BodyPlain: api.NewOptString("Hi.")}, api.UniboxComposeParams{})
	require.NoError(t, err)
	compose, ok := res.(*api.UniboxComposeAccepted)
	require.True(t, ok, "%T", res)
	require.Equal(t, api.UniboxComposeResultResultAwaitingApproval, compose.Result)
	require.Equal(t, noPolicy, compose.Reasons)
	require.Equal(t, link(compose.ApprovalID.Value), compose.ApprovalURL.Value.String())
	require.False(t, compose.TaskID.Set || compose.ThreadID.Set)

	rres, err := r.agent.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: r.box.ID, To: []string{"bob@client.example"}, Subject: "Re: Pricing",
		BodyPlain: api.NewOptString("Tuesday works."), ThreadID: api.NewOptString(thread.String())}, api.UniboxReplyParams{})
	require.NoError(t, err)
	reply, ok := rres.(*api.UniboxReplyAccepted)
	require.True(t, ok, "%T", rres)
	require.Equal(t, api.UniboxReplyResultResultAwaitingApproval, reply.Result)
	require.Equal(t, noPolicy, reply.Reasons)
	require.True(t, reply.ExpiresAt.Set)

	// Nothing was queued or sent; three approvals wait, each announced, audited, notified and due to expire.
	require.Zero(t, r.count(t, `SELECT count(*) FROM send_tasks`))
	require.Zero(t, r.smtp.Count())
	list, err := r.session.ApprovalsList(ctx)
	require.NoError(t, err)
	require.Len(t, list.Data, 3)
	require.Equal(t, []uuid.UUID{reply.ApprovalID.Value, compose.ApprovalID.Value, direct.ApprovalID.Value},
		[]uuid.UUID{list.Data[0].ID.Value, list.Data[1].ID.Value, list.Data[2].ID.Value}, "newest first")
	require.Equal(t, api.SendApprovalActionTypeInboxReply, list.Data[0].ActionType.Value)
	require.Equal(t, api.SendApprovalActionTypeEmailCompose, list.Data[1].ActionType.Value)
	d := list.Data[2]
	require.Equal(t, api.SendApprovalStatusPending, d.Status.Value)
	require.Equal(t, noPolicy, d.Reasons)
	require.Equal(t, api.SendApprovalRequestedBy{Kind: api.SendApprovalRequestedByKindAPIKey, CredentialID: r.agentKey.ID,
		UserID: api.NewOptUUID(r.agentKey.UserID)}, d.RequestedBy.Value)
	require.JSONEq(t, `["carol@client.example","dan@client.example"]`, string(d.Payload.Value["to"]))
	require.JSONEq(t, `"Hello Carol"`, string(d.Payload.Value["subject"]))
	require.JSONEq(t, `"mailbox.direct_send"`, string(d.Payload.Value["event"]))
	require.Equal(t, int64(3), r.count(t, `SELECT count(*) FROM event_outbox WHERE event_type = 'approval.requested'`))
	require.Equal(t, int64(3), r.count(t, `SELECT count(*) FROM audit_log WHERE event = 'approval.requested' AND target_type = 'approval'`))
	var notified int
	require.NoError(t, r.env.DB.OwnerPool(t).QueryRow(ctx, `SELECT count(*) FROM notifications WHERE organization_id = $1
		AND category = 'team_activity' AND title = 'An agent asks to send an email: "Hello Carol" to carol@client.example, dan@client.example'
		AND link = $2`, r.org, link(direct.ApprovalID.Value)).Scan(&notified))
	require.Equal(t, 1, notified, "the owner, who may decide, is told")
	var expiries int
	require.NoError(t, r.env.DB.OwnerPool(t).QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'approval_expire'
		AND args->>'organization_id' = $1 AND scheduled_at > now() + interval '29 minutes'`, r.org.String()).Scan(&expiries))
	require.Equal(t, 3, expiries)

	// A held send is checked as the send would be: what could not be sent is refused at once, nothing held.
	orgExec(t, r.env, r.org, `INSERT INTO suppressions (organization_id, id, kind, value, source, reason) VALUES ($1, $2, 'email', 'zed@client.example', 'manual', 'Asked')`,
		r.org, uuid.Must(uuid.NewV7()))
	_, err = r.agent.MailboxesSend(ctx, &api.MailboxSendRequest{To: []string{"zed@client.example"}, Subject: "Hi", BodyPlain: api.NewOptString("x")},
		api.MailboxesSendParams{ID: r.box.ID})
	requireAPIError(t, err, 400, "recipient_suppressed")
	require.Equal(t, int64(3), r.count(t, `SELECT count(*) FROM approvals`))

	// The approval routes are for people.
	_, err = r.agent.ApprovalsList(ctx)
	requireAPIError(t, err, 403, "session_required")
	_, err = r.agent.ApprovalsDecide(ctx, &api.ApprovalsDecideReq{Decision: api.ApprovalsDecideReqDecisionApproved}, api.ApprovalsDecideParams{ID: d.ID.Value})
	requireAPIError(t, err, 403, "session_required")
}

func TestAPersonApprovingAHeldSendSendsItExactlyOnce(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t)
	id := held(t, r.directSend(t, r.agent, "Quarterly numbers", "carol@client.example")).ApprovalID.Value

	a, err := r.decide(t, id, api.ApprovalsDecideReqDecisionApproved, "Looks right.")
	require.NoError(t, err)
	require.Equal(t, api.SendApprovalStatusExecuted, a.Status.Value)
	require.Equal(t, "Looks right.", a.DecisionReason.Value)
	require.True(t, a.DecidedAt.Set && a.ExecutedAt.Set)
	var task uuid.UUID
	resultField(t, a, "task_id", &task)
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM send_tasks WHERE id = $1 AND subject = 'Quarterly numbers' AND to_email = 'carol@client.example'`, task))
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM audit_log WHERE event = 'mailbox.direct_send' AND target_id = $1
		AND metadata->>'approval_id' = $2 AND actor_type = 'user'`, task.String(), id.String()), "the send keeps its audit entry, with the approval")
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM audit_log WHERE action = 'approve' AND target_type = 'approval' AND target_id = $1`, id.String()))
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM event_outbox WHERE event_type = 'approval.decided'
		AND data->>'approval_id' = $1 AND data->>'status' = 'executed' AND data->'result'->>'task_id' = $2`, id.String(), task.String()))

	// A second decision changes nothing.
	_, err = r.decide(t, id, api.ApprovalsDecideReqDecisionApproved, "")
	requireAPIError(t, err, 409, "approval_already_decided")
	_, err = r.decide(t, id, api.ApprovalsDecideReqDecisionDenied, "")
	requireAPIError(t, err, 409, "approval_already_decided")
	_, err = r.decide(t, uuid.New(), api.ApprovalsDecideReqDecisionApproved, "")
	requireAPIError(t, err, 404, "approval_not_found")
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM send_tasks`))

	r.due(t, task)
	require.Zero(t, r.attempt(t, task))
	m := r.delivered(t, 1)
	require.Equal(t, "Quarterly numbers", m.Header.Get("Subject"))
	require.Equal(t, []string{"carol@client.example"}, r.smtp.Messages()[0].To)
}

func TestADeniedSendIsNeverSent(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t)
	ctx := context.Background()
	thread, _ := r.thread(t, r.box.ID, "Pricing", stored{messageID: "<root@client.example>"})
	res, err := r.agent.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: r.box.ID, To: []string{"bob@client.example"}, Subject: "Re: Pricing",
		BodyPlain: api.NewOptString("Half price!"), ThreadID: api.NewOptString(thread.String())}, api.UniboxReplyParams{})
	require.NoError(t, err)
	id := res.(*api.UniboxReplyAccepted).ApprovalID.Value

	_, err = r.decide(t, id, api.ApprovalsDecideReqDecisionDenied, strings.Repeat("x", 1001))
	requireAPIError(t, err, 400, "invalid_reason")
	a, err := r.decide(t, id, api.ApprovalsDecideReqDecisionDenied, "We do not discount.")
	require.NoError(t, err)
	require.Equal(t, api.SendApprovalStatusDenied, a.Status.Value)
	require.Equal(t, "We do not discount.", a.DecisionReason.Value)
	require.False(t, a.ExecutedAt.Set || a.Result.Set)
	_, err = r.decide(t, id, api.ApprovalsDecideReqDecisionApproved, "")
	requireAPIError(t, err, 409, "approval_already_decided")
	require.Zero(t, r.count(t, `SELECT count(*) FROM send_tasks`))
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM audit_log WHERE action = 'deny' AND target_id = $1`, id.String()))
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM event_outbox WHERE event_type = 'approval.decided' AND data->>'status' = 'denied'
		AND data->>'reason' = 'We do not discount.'`))
}

func TestAnExpiredApprovalCannotBeDecidedAndTheExpiryJobMarksIt(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t)
	ctx := context.Background()
	first := held(t, r.directSend(t, r.agent, "One", "carol@client.example")).ApprovalID.Value
	second := held(t, r.directSend(t, r.agent, "Two", "carol@client.example")).ApprovalID.Value
	orgExec(t, r.env, r.org, `UPDATE approvals SET expires_at = now() - interval '1 second'`)

	// Reads show them expired at once; deciding one is refused and marks it.
	list, err := r.session.ApprovalsList(ctx)
	require.NoError(t, err)
	for _, a := range list.Data {
		require.Equal(t, api.SendApprovalStatusExpired, a.Status.Value)
	}
	_, err = r.decide(t, first, api.ApprovalsDecideReqDecisionApproved, "")
	requireAPIError(t, err, 409, "approval_expired")
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM approvals WHERE id = $1 AND status = 'expired' AND decided_by IS NULL`, first))
	_, err = r.decide(t, first, api.ApprovalsDecideReqDecisionDenied, "")
	requireAPIError(t, err, 409, "approval_expired")

	// The expiry job, due at the approval's expiry, marks the other one and says so.
	inserter, err := jobs.NewClient(jobs.Deps{Pool: r.env.DB.Pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{})
	require.NoError(t, err)
	worker := &approvals.ExpireWorker{Service: approvals.New(r.env.DB.Pool, events.NewOutbox(inserter), r.env.Config.AppURL)}
	require.NoError(t, worker.Work(ctx, &river.Job[approvals.ExpireArgs]{Args: approvals.ExpireArgs{OrganizationID: r.org, ApprovalID: second}}))
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM approvals WHERE id = $1 AND status = 'expired'`, second))
	for _, id := range []uuid.UUID{first, second} {
		require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM event_outbox WHERE event_type = 'approval.decided'
			AND data->>'approval_id' = $1 AND data->>'status' = 'expired'`, id.String()), "one approval.decided each")
	}
	// Run again (a retry), it changes nothing; a decided approval is left alone.
	require.NoError(t, worker.Work(ctx, &river.Job[approvals.ExpireArgs]{Args: approvals.ExpireArgs{OrganizationID: r.org, ApprovalID: second}}))
	require.Equal(t, int64(2), r.count(t, `SELECT count(*) FROM event_outbox WHERE event_type = 'approval.decided'`))
	third := held(t, r.directSend(t, r.agent, "Three", "carol@client.example")).ApprovalID.Value
	_, err = r.decide(t, third, api.ApprovalsDecideReqDecisionDenied, "")
	require.NoError(t, err)
	orgExec(t, r.env, r.org, `UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = $1`, third)
	require.NoError(t, worker.Work(ctx, &river.Job[approvals.ExpireArgs]{Args: approvals.ExpireArgs{OrganizationID: r.org, ApprovalID: third}}))
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM approvals WHERE id = $1 AND status = 'denied'`, third))

	// One whose time has not come is snoozed until it has.
	fourth := held(t, r.directSend(t, r.agent, "Four", "carol@client.example")).ApprovalID.Value
	err = worker.Work(ctx, &river.Job[approvals.ExpireArgs]{Args: approvals.ExpireArgs{OrganizationID: r.org, ApprovalID: fourth}})
	var snooze *river.JobSnoozeError
	require.ErrorAs(t, err, &snooze)
	require.InDelta(t, (30 * time.Minute).Seconds(), snooze.Duration.Seconds(), 15)
	require.Zero(t, r.count(t, `SELECT count(*) FROM send_tasks`))
}

func TestAnApprovedSendThatAHardGateNowRefusesStaysApprovedWithTheError(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t)
	id := held(t, r.directSend(t, r.agent, "Hello", "carol@client.example")).ApprovalID.Value
	// Meanwhile carol asked to hear nothing more.
	orgExec(t, r.env, r.org, `INSERT INTO suppressions (organization_id, id, kind, value, source, reason) VALUES ($1, $2, 'email', 'carol@client.example', 'manual', 'Asked')`,
		r.org, uuid.Must(uuid.NewV7()))

	a, err := r.decide(t, id, api.ApprovalsDecideReqDecisionApproved, "")
	require.NoError(t, err, "the decision is recorded: 200")
	require.Equal(t, api.SendApprovalStatusApproved, a.Status.Value)
	require.False(t, a.ExecutedAt.Set)
	var refusal struct{ Code, Message string }
	resultField(t, a, "error", &refusal)
	require.Equal(t, "recipient_suppressed", refusal.Code)
	require.Contains(t, refusal.Message, "carol@client.example")
	require.Zero(t, r.count(t, `SELECT count(*) FROM send_tasks`))
	require.Zero(t, r.count(t, `SELECT count(*) FROM audit_log WHERE event = 'mailbox.direct_send'`))
	_, err = r.decide(t, id, api.ApprovalsDecideReqDecisionApproved, "")
	requireAPIError(t, err, 409, "approval_already_decided")
}

func TestAnApprovedSendActsWithTheRequestersMailboxScopeNotTheApprovers(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t)
	ctx := context.Background()
	other := r.connect(t, "grace@example.com")
	scoped := newKey(t, r.session, api.CreateAPIKey{Name: "scoped", Permissions: int64(auth.FullAccess), AllowedEmailAccounts: []uuid.UUID{r.box.ID}})
	id := held(t, r.directSend(t, r.env.Client(t, scoped.Secret), "Hello", "carol@client.example")).ApprovalID.Value
	list, err := r.session.ApprovalsList(ctx)
	require.NoError(t, err)
	require.JSONEq(t, `["`+r.box.ID.String()+`"]`, string(list.Data[0].Payload.Value["allowed_mailboxes"]))

	// Pointed at a mailbox outside the key's scope, approving by the owner (who may use every mailbox) fails.
	orgExec(t, r.env, r.org, `UPDATE approvals SET payload = jsonb_set(payload, '{mailbox_id}', to_jsonb($2::text)) WHERE id = $1`, id, other.ID.String())
	a, err := r.decide(t, id, api.ApprovalsDecideReqDecisionApproved, "")
	require.NoError(t, err)
	var refusal struct{ Code string }
	resultField(t, a, "error", &refusal)
	require.Equal(t, "mailbox_not_found", refusal.Code)
	require.Zero(t, r.count(t, `SELECT count(*) FROM send_tasks`))
}

func TestApprovedRepliesAndComposedMessagesGoOutAsTheyWereAsked(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t)
	ctx := context.Background()
	thread, _ := r.thread(t, r.box.ID, "Pricing", stored{messageID: "<root@client.example>"})
	res, err := r.agent.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: r.box.ID, To: []string{"bob@client.example"}, Subject: "Re: Pricing",
		BodyPlain: api.NewOptString("Tuesday works."), ThreadID: api.NewOptString(thread.String())}, api.UniboxReplyParams{})
	require.NoError(t, err)
	reply, err := r.decide(t, res.(*api.UniboxReplyAccepted).ApprovalID.Value, api.ApprovalsDecideReqDecisionApproved, "")
	require.NoError(t, err)
	require.Equal(t, api.SendApprovalStatusExecuted, reply.Status.Value)
	var task uuid.UUID
	resultField(t, reply, "task_id", &task)
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM send_tasks WHERE id = $1 AND kind = 'reply' AND thread_id = $2`, task, thread))
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM audit_log WHERE event = 'unibox.reply' AND target_id = $1`, task.String()))
	r.due(t, task)
	require.Zero(t, r.attempt(t, task))
	require.Equal(t, "<root@client.example>", r.delivered(t, 1).Header.Get("In-Reply-To"), "the reply answers its thread")

	cres, err := r.agent.UniboxCompose(ctx, &api.UniboxComposeRequest{EmailAccountID: r.box.ID, To: []string{"erin@client.example"}, Subject: "Hi Erin",
		BodyPlain: api.NewOptString("Hi."), SendMode: api.NewOptUniboxComposeRequestSendMode(api.UniboxComposeRequestSendModeScheduled),
		ScheduledAt: api.NewOptDateTime(time.Now().Add(2 * time.Hour).Truncate(time.Second))}, api.UniboxComposeParams{})
	require.NoError(t, err)
	composed, err := r.decide(t, cres.(*api.UniboxComposeAccepted).ApprovalID.Value, api.ApprovalsDecideReqDecisionApproved, "")
	require.NoError(t, err)
	var newThread string
	resultField(t, composed, "thread_id", &newThread)
	resultField(t, composed, "task_id", &task)
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM send_tasks WHERE id = $1 AND kind = 'direct' AND thread_id = $2::uuid
		AND send_mode = 'scheduled' AND not_before > now() + interval '1 hour'`, task, newThread), "a new conversation, at the time asked")
}
