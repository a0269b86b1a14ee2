package handlers_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// TestAnAPIKeyStartsACampaignOnlyUnderAnAgentPolicyThatAllowsTheLaunch: service-wide rule 2 for POST
// /campaigns/{id}/start and PATCH status active. Without a policy, with one missing campaign.launch, a
// mailbox of the pool or room for the leads, nothing starts; within one the start is counted once.
func TestAnAPIKeyStartsACampaignOnlyUnderAnAgentPolicyThatAllowsTheLaunch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	owner := env.Owner(t, "acme")
	first := campMailbox(t, env, org, "first@example.com", 50)
	second := campMailbox(t, env, org, "second@example.com", 50)
	key := newKey(t, owner, api.CreateAPIKey{Name: "agent", Permissions: int64(auth.ReadCampaigns | auth.WriteCampaigns),
		RateLimitPerMinute: api.NewOptInt(auth.MaxRateLimitPerMinute)})
	agent := env.Client(t, key.Secret)
	camp := campCreate(t, agent, api.CampaignCreate{Name: "Agent's", Steps: []api.CampaignStepCreate{
		{Subject: api.NewOptString("Hi"), BodyPlain: api.NewOptString("Hello")}}})
	createContacts(t, owner, api.ContactCreate{Email: "ann@client.example", Campaigns: []uuid.UUID{camp.ID}},
		api.ContactCreate{Email: "ben@client.example", Campaigns: []uuid.UUID{camp.ID}})

	refused := func(why string) {
		t.Helper()
		_, err := agent.CampaignsStart(ctx, api.CampaignsStartParams{ID: camp.ID})
		requireAPIError(t, err, http.StatusForbidden, "agent_policy_required")
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se)
		require.Contains(t, se.Response.Message, why)
		require.Contains(t, se.Response.Message, "POST /v1/runs", "the refusal names the launch a person can approve")
		_, err = agent.CampaignsUpdate(ctx, &api.CampaignUpdate{Status: api.NewOptCampaignStatus(api.CampaignStatusActive)},
			api.CampaignsUpdateParams{ID: camp.ID})
		requireAPIError(t, err, http.StatusForbidden, "agent_policy_required")
		require.Equal(t, api.CampaignStatusDraft, campGet(t, owner, camp.ID).Status, "a refused start changes nothing")
	}
	refused("has no agent policy")

	p := &api.AgentPolicy{Name: "launcher", APIKeyID: api.NewOptUUID(key.ID),
		Capabilities: []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemEmailCompose},
		MailboxIds:   []uuid.UUID{first, second}, MaxRecipientsPerRun: 2, MaxRecipientsPerDay: 10, MaxActionsPerDay: 5,
		ExpiresAt: time.Now().Add(24 * time.Hour).Truncate(time.Second)}
	pol, err := owner.AgentPoliciesCreate(ctx, p)
	require.NoError(t, err)
	update := func(change func(*api.AgentPolicy)) {
		t.Helper()
		change(p)
		_, err := owner.AgentPoliciesUpdate(ctx, p, api.AgentPoliciesUpdateParams{ID: pol.ID.Value})
		require.NoError(t, err)
	}
	refused("does not include the capability campaign.launch")
	update(func(p *api.AgentPolicy) {
		p.Capabilities = []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemCampaignLaunch}
		p.MailboxIds = []uuid.UUID{first}
	})
	refused("Mailbox " + second.String() + " is not in the policy's mailbox_ids")
	update(func(p *api.AgentPolicy) { p.MailboxIds, p.MaxRecipientsPerRun = []uuid.UUID{first, second}, 1 })
	refused("reaches 2 recipients; the policy allows 1 per run")
	require.Zero(t, orgInt(t, env, org, "SELECT count(*) FROM agent_policy_usage WHERE policy_id = $1", pol.ID.Value),
		"refusals count nothing")

	update(func(p *api.AgentPolicy) { p.MaxRecipientsPerRun = 2 })
	res, err := agent.CampaignsStart(ctx, api.CampaignsStartParams{ID: camp.ID})
	require.NoError(t, err)
	require.Equal(t, "started", res.Status.Value)
	require.Equal(t, api.CampaignStatusActive, campGet(t, owner, camp.ID).Status)
	usage := func() int64 {
		return orgInt(t, env, org, "SELECT recipients * 1000 + actions FROM agent_policy_usage WHERE policy_id = $1", pol.ID.Value)
	}
	require.EqualValues(t, 2001, usage(), "the start counts its 2 recipients and 1 action")
	_, err = agent.CampaignsStart(ctx, api.CampaignsStartParams{ID: camp.ID})
	require.NoError(t, err)
	require.EqualValues(t, 2001, usage(), "starting an active campaign launches and counts nothing")

	_, err = agent.CampaignsStop(ctx, api.CampaignsStopParams{ID: camp.ID})
	require.NoError(t, err, "stopping sends nothing and needs no policy")
	_, err = agent.CampaignsUpdate(ctx, &api.CampaignUpdate{Status: api.NewOptCampaignStatus(api.CampaignStatusActive)},
		api.CampaignsUpdateParams{ID: camp.ID})
	require.NoError(t, err)
	require.EqualValues(t, 4002, usage(), "setting it active again is another launch")
}
