package handlers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// oauthGrant runs the authorization code flow for the owner of the env's organization org and returns the
// access token and its grant.
func oauthGrant(t *testing.T, env *apitest.Env, org uuid.UUID, email string, scopes ...string) (string, uuid.UUID) {
	t.Helper()
	reg := registerPublicClient(t, env, strings.Join(scopes, " "))
	conf := oauthConfig(env, reg.ClientID, "", scopes...)
	verifier := oauth2.GenerateVerifier()
	browser := newOAuthBrowser(t, env, email)
	page := browser.consent(t, conf.AuthCodeURL("state", oauth2.S256ChallengeOption(verifier)))
	back := browser.decide(t, page, org, "approve")
	tok, err := conf.Exchange(oauthContext(env), back.Query().Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	var grant uuid.UUID
	require.NoError(t, env.DB.OwnerPool(t).QueryRow(context.Background(),
		`SELECT id FROM oauth_grants WHERE organization_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1`, org).Scan(&grant))
	return tok.AccessToken, grant
}

func TestAgentPoliciesAreManagedBySessionsUnderTheirRules(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t)
	ctx := context.Background()
	base := func() *api.AgentPolicy {
		return &api.AgentPolicy{Name: "Drafting agent", APIKeyID: api.NewOptUUID(r.agentKey.ID),
			Capabilities: []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemEmailCompose},
			MailboxIds:   []uuid.UUID{r.box.ID, r.box.ID}, MaxRecipientsPerRun: 10, MaxRecipientsPerDay: 100, MaxActionsPerDay: 20,
			ExpiresAt: time.Now().Add(7 * 24 * time.Hour).Truncate(time.Second)}
	}
	refused := func(change func(*api.AgentPolicy), status int, code, mention string) {
		t.Helper()
		p := base()
		change(p)
		_, err := r.session.AgentPoliciesCreate(ctx, p)
		requireAPIError(t, err, status, code)
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se)
		require.Contains(t, se.Response.Message, mention)
	}
	unknown := uuid.New()
	refused(func(p *api.AgentPolicy) { p.OAuthGrantID = api.NewOptUUID(uuid.New()) }, 400, "invalid_policy_credential", "exactly one")
	refused(func(p *api.AgentPolicy) { p.APIKeyID = api.OptUUID{} }, 400, "invalid_policy_credential", "exactly one")
	refused(func(p *api.AgentPolicy) { p.APIKeyID = api.NewOptUUID(unknown) }, 404, "api_key_not_found", unknown.String())
	refused(func(p *api.AgentPolicy) { p.APIKeyID, p.OAuthGrantID = api.OptUUID{}, api.NewOptUUID(unknown) }, 404, "oauth_grant_not_found", unknown.String())
	refused(func(p *api.AgentPolicy) { p.MailboxIds = []uuid.UUID{r.box.ID, unknown} }, 400, "unknown_mailbox", unknown.String())
	refused(func(p *api.AgentPolicy) { p.ExpiresAt = time.Now().Add(-time.Minute) }, 400, "invalid_expires_at", "future")
	refused(func(p *api.AgentPolicy) {
		p.Capabilities = append(p.Capabilities, api.AgentPolicyCapabilitiesItemMailboxProvision)
	}, 400, "spend_limit_required", "max_monthly_mailbox_spend_cents")
	refused(func(p *api.AgentPolicy) {
		p.Capabilities = append(p.Capabilities, api.AgentPolicyCapabilitiesItemMailboxProvision)
		p.MaxMonthlyMailboxSpendCents = api.NewOptInt(-1)
	}, 400, "spend_limit_required", "0 or more")
	refused(func(p *api.AgentPolicy) { p.Capabilities = []api.AgentPolicyCapabilitiesItem{} }, 400, "invalid_capabilities", "at least one")
	refused(func(p *api.AgentPolicy) { p.Capabilities = append(p.Capabilities, p.Capabilities[0]) }, 400, "invalid_capabilities", "twice")
	refused(func(p *api.AgentPolicy) { p.Name = "  " }, 400, "invalid_name", "name")
	revoked := newKey(t, r.session, api.CreateAPIKey{Name: "old", Permissions: int64(auth.ReadOnly)})
	_, err := r.session.APIKeysRevoke(ctx, api.APIKeysRevokeParams{ID: revoked.ID})
	require.NoError(t, err)
	refused(func(p *api.AgentPolicy) { p.APIKeyID = api.NewOptUUID(revoked.ID) }, 404, "api_key_not_found", "revoked")
	require.Zero(t, r.count(t, `SELECT count(*) FROM agent_policies`), "nothing refused was stored")

	// Created: enabled by default, mailbox ids once each.
	provision := base()
	provision.Capabilities = append(provision.Capabilities, api.AgentPolicyCapabilitiesItemMailboxProvision)
	provision.MaxMonthlyMailboxSpendCents = api.NewOptInt(0)
	created, err := r.session.AgentPoliciesCreate(ctx, provision)
	require.NoError(t, err)
	require.True(t, created.Enabled.Value)
	require.Equal(t, []uuid.UUID{r.box.ID}, created.MailboxIds)
	require.Equal(t, 0, created.MaxMonthlyMailboxSpendCents.Value)
	require.Equal(t, provision.ExpiresAt.UTC(), created.ExpiresAt.UTC())

	// One enabled policy per credential; a disabled second one may wait beside it.
	_, err = r.session.AgentPoliciesCreate(ctx, base())
	requireAPIError(t, err, 409, "agent_policy_exists")
	spare := base()
	spare.Enabled = api.NewOptBool(false)
	second, err := r.session.AgentPoliciesCreate(ctx, spare)
	require.NoError(t, err)
	spare.Enabled = api.NewOptBool(true)
	_, err = r.session.AgentPoliciesUpdate(ctx, spare, api.AgentPoliciesUpdateParams{ID: second.ID.Value})
	requireAPIError(t, err, 409, "agent_policy_exists")

	// PUT replaces the whole policy (the spend cap not sent is gone), under the same rules.
	replacement := base()
	replacement.Name = "Replying agent"
	replacement.Capabilities = []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemInboxReply}
	replaced, err := r.session.AgentPoliciesUpdate(ctx, replacement, api.AgentPoliciesUpdateParams{ID: created.ID.Value})
	require.NoError(t, err)
	require.Equal(t, "Replying agent", replaced.Name)
	require.Equal(t, []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemInboxReply}, replaced.Capabilities)
	require.False(t, replaced.MaxMonthlyMailboxSpendCents.Set)
	replacement.MailboxIds = []uuid.UUID{unknown}
	_, err = r.session.AgentPoliciesUpdate(ctx, replacement, api.AgentPoliciesUpdateParams{ID: created.ID.Value})
	requireAPIError(t, err, 400, "unknown_mailbox")
	_, err = r.session.AgentPoliciesUpdate(ctx, base(), api.AgentPoliciesUpdateParams{ID: unknown})
	requireAPIError(t, err, 404, "agent_policy_not_found")

	list, err := r.session.AgentPoliciesList(ctx)
	require.NoError(t, err)
	require.Len(t, list.Data, 2)
	require.Equal(t, second.ID, list.Data[0].ID, "newest first")

	// The effective policy is the enabled one bound to the calling credential.
	eff, err := r.agent.AgentPoliciesGetEffective(ctx)
	require.NoError(t, err)
	require.Equal(t, created.ID, eff.ID)
	_, err = r.c.AgentPoliciesGetEffective(ctx)
	requireAPIError(t, err, 404, "agent_policy_not_found")
	_, err = r.session.AgentPoliciesGetEffective(ctx)
	requireAPIError(t, err, 404, "agent_policy_not_found")
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Response.Message, "signed-in person")

	require.NoError(t, r.session.AgentPoliciesDelete(ctx, api.AgentPoliciesDeleteParams{ID: created.ID.Value}))
	requireAPIError(t, r.session.AgentPoliciesDelete(ctx, api.AgentPoliciesDeleteParams{ID: created.ID.Value}), 404, "agent_policy_not_found")
	_, err = r.agent.AgentPoliciesGetEffective(ctx)
	requireAPIError(t, err, 404, "agent_policy_not_found")
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM audit_log WHERE target_type = 'agent_policy' AND action = 'update' AND target_id = $1`,
		created.ID.Value.String()))
	require.Equal(t, int64(2), r.count(t, `SELECT count(*) FROM audit_log WHERE target_type = 'agent_policy' AND action = 'create'`))
	require.Equal(t, int64(1), r.count(t, `SELECT count(*) FROM audit_log WHERE target_type = 'agent_policy' AND action = 'delete'`))

	// Policies are for people who manage settings; API keys manage none.
	_, err = r.agent.AgentPoliciesList(ctx)
	requireAPIError(t, err, 403, "session_required")
	_, err = r.agent.AgentPoliciesCreate(ctx, base())
	requireAPIError(t, err, 403, "session_required")
	_, err = r.agent.AgentPoliciesUpdate(ctx, base(), api.AgentPoliciesUpdateParams{ID: second.ID.Value})
	requireAPIError(t, err, 403, "session_required")
	requireAPIError(t, r.agent.AgentPoliciesDelete(ctx, api.AgentPoliciesDeleteParams{ID: second.ID.Value}), 403, "session_required")
}

func TestAnOAuthGrantActsUnderThePolicyBoundToIt(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t)
	ctx := context.Background()
	token, grant := oauthGrant(t, r.env, r.org, "owner@acme.example", "send_direct_email")
	agent := r.env.Client(t, token)
	_, err := agent.AgentPoliciesGetEffective(ctx)
	requireAPIError(t, err, 404, "agent_policy_not_found")
	acc := held(t, r.directSend(t, agent, "Hello", "carol@client.example"))
	require.Equal(t, []string{"The OAuth grant has no agent policy."}, acc.Reasons)

	p, err := r.session.AgentPoliciesCreate(ctx, &api.AgentPolicy{Name: "app", OAuthGrantID: api.NewOptUUID(grant),
		Capabilities: []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemEmailCompose}, MailboxIds: []uuid.UUID{r.box.ID},
		MaxRecipientsPerRun: 1, MaxRecipientsPerDay: 1, MaxActionsPerDay: 1, ExpiresAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	eff, err := agent.AgentPoliciesGetEffective(ctx)
	require.NoError(t, err)
	require.Equal(t, p.ID, eff.ID)
	require.Equal(t, grant, eff.OAuthGrantID.Value)
	_, ok := r.directSend(t, agent, "Hello", "carol@client.example").(*api.MailboxesSendOK)
	require.True(t, ok, "within its policy the grant sends at once")
}

func TestAPolicyWithinItsLimitsSendsAtOnceAndEachLimitHoldsTheNextCall(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t)
	ctx := context.Background()
	thread, _ := r.thread(t, r.box.ID, "Pricing", stored{messageID: "<root@client.example>"})
	other := r.connect(t, "grace@example.com")
	r.grant(t, func(p *api.AgentPolicy) {
		p.Capabilities = []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemEmailCompose}
		p.MaxRecipientsPerRun, p.MaxRecipientsPerDay, p.MaxActionsPerDay = 3, 7, 3
	})
	recipients := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = uuid.NewString()[:8] + "@client.example"
		}
		return out
	}
	sent := func(res api.MailboxesSendRes) {
		t.Helper()
		ok, isOK := res.(*api.MailboxesSendOK)
		require.True(t, isOK, "want 200 executed, got %+v", res)
		require.Equal(t, api.MailboxSendResultResultExecuted, ok.Result)
	}
	heldFor := func(res api.MailboxesSendRes, reason string) {
		t.Helper()
		require.Equal(t, []string{reason}, held(t, res).Reasons)
	}

	// What the policy does not cover waits, and counts nothing.
	res, err := r.agent.MailboxesSend(ctx, &api.MailboxSendRequest{To: recipients(1), Subject: "Hi", BodyPlain: api.NewOptString("x")},
		api.MailboxesSendParams{ID: other.ID})
	require.NoError(t, err)
	heldFor(res, "Mailbox "+other.ID.String()+" is not in the policy's mailbox_ids.")
	reply, err := r.agent.UniboxReply(ctx, &api.UniboxReplyRequest{EmailAccountID: r.box.ID, To: []string{"bob@client.example"}, Subject: "Re: Pricing",
		BodyPlain: api.NewOptString("Yes."), ThreadID: api.NewOptString(thread.String())}, api.UniboxReplyParams{})
	require.NoError(t, err)
	require.Equal(t, []string{"The agent policy does not include the capability inbox.reply."}, reply.(*api.UniboxReplyAccepted).Reasons)
	heldFor(r.directSend(t, r.agent, "Big", recipients(4)...), "The action reaches 4 recipients; the policy allows 3 per run (max_recipients_per_run).")

	// Within it, sends go at once: to+cc+bcc count.
	composed, err := r.agent.UniboxCompose(ctx, &api.UniboxComposeRequest{EmailAccountID: r.box.ID, To: recipients(1), Bcc: recipients(1),
		Subject: "Hi", BodyPlain: api.NewOptString("x")}, api.UniboxComposeParams{})
	require.NoError(t, err)
	require.Equal(t, api.UniboxComposeResultResultExecuted, composed.(*api.UniboxComposeOK).Result)
	sent(r.directSend(t, r.agent, "Three", recipients(3)...))
	heldFor(r.directSend(t, r.agent, "Three more", recipients(3)...),
		"The action's 3 recipients would bring today's (UTC) total to 8; the policy allows 7 a day (max_recipients_per_day).")
	sent(r.directSend(t, r.agent, "One", recipients(1)...))
	heldFor(r.directSend(t, r.agent, "Last", recipients(1)...), "The policy's 3 actions for today (UTC) are used up (max_actions_per_day).")
	require.Equal(t, int64(3), r.count(t, `SELECT count(*) FROM send_tasks`))
	require.Equal(t, int64(5), r.count(t, `SELECT count(*) FROM approvals WHERE status = 'pending'`))

	// An expired policy holds everything.
	orgExec(t, r.env, r.org, `UPDATE agent_policies SET expires_at = now() - interval '1 minute', max_actions_per_day = 100`)
	acc := held(t, r.directSend(t, r.agent, "Late", recipients(1)...))
	require.Len(t, acc.Reasons, 1)
	require.True(t, strings.HasPrefix(acc.Reasons[0], "The agent policy expired at "), acc.Reasons[0])

	// A person's send is never held, whatever the policies.
	sent(r.directSend(t, r.session, "From a person", recipients(40)...))
	require.Equal(t, int64(4), r.count(t, `SELECT count(*) FROM send_tasks`))
}
