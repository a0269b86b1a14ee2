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
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// gateRig is an organization with a mailbox, an active campaign (one lead, started by the owner), a draft one,
// and an agent: a full-access API key bound to no policy until a test grants one. Contacts are made by the
// owner, without campaigns.
type gateRig struct {
	env           *apitest.Env
	org           uuid.UUID
	owner, agent  *api.Client
	key           *api.APIKeyWithSecret
	box           uuid.UUID
	active, draft uuid.UUID
}

func newGateRig(t *testing.T) *gateRig {
	t.Helper()
	env := apitest.New(t)
	r := &gateRig{env: env, org: env.Bootstrap(t, "acme").OrganizationID, owner: env.Owner(t, "acme")}
	r.box = campMailbox(t, env, r.org, "sales@acme.example", 50)
	r.key = newKey(t, r.owner, api.CreateAPIKey{Name: "agent", Permissions: int64(auth.FullAccess),
		RateLimitPerMinute: api.NewOptInt(auth.MaxRateLimitPerMinute)})
	r.agent = env.Client(t, r.key.Secret)
	r.active = r.campaign(t, "Active")
	createContacts(t, r.owner, api.ContactCreate{Email: "first@client.example", Campaigns: []uuid.UUID{r.active}})
	_, err := r.owner.CampaignsStart(context.Background(), api.CampaignsStartParams{ID: r.active})
	require.NoError(t, err)
	r.draft = r.campaign(t, "Draft")
	return r
}

// campaign creates a one-step draft campaign as the owner.
func (r *gateRig) campaign(t *testing.T, name string) uuid.UUID {
	t.Helper()
	return campCreate(t, r.owner, api.CampaignCreate{Name: name, Steps: []api.CampaignStepCreate{
		{Subject: api.NewOptString("Hello"), BodyPlain: api.NewOptString("Hi there")}}}).ID
}

// contacts creates contacts with the addresses as the owner and answers their ids in order.
func (r *gateRig) contacts(t *testing.T, emails ...string) []uuid.UUID {
	t.Helper()
	in := make([]api.ContactCreate, len(emails))
	for i, e := range emails {
		in[i] = api.ContactCreate{Email: e}
	}
	out := createContacts(t, r.owner, in...)
	ids := make([]uuid.UUID, len(out))
	for i, c := range out {
		ids[i] = c.ID
	}
	return ids
}

// grant binds a policy to the agent's key: campaign.launch from the rig's mailbox, 2 recipients a run, 4 a
// day, 10 actions a day; change adjusts it first.
func (r *gateRig) grant(t *testing.T, change func(*api.AgentPolicy)) uuid.UUID {
	t.Helper()
	p := &api.AgentPolicy{Name: "leads", APIKeyID: api.NewOptUUID(r.key.ID),
		Capabilities: []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemCampaignLaunch},
		MailboxIds:   []uuid.UUID{r.box}, MaxRecipientsPerRun: 2, MaxRecipientsPerDay: 4, MaxActionsPerDay: 10,
		ExpiresAt: time.Now().Add(24 * time.Hour).Truncate(time.Second)}
	if change != nil {
		change(p)
	}
	out, err := r.owner.AgentPoliciesCreate(context.Background(), p)
	require.NoError(t, err)
	return out.ID.Value
}

// usage is today's recipients and actions counted against policy.
func (r *gateRig) usage(t *testing.T, policy uuid.UUID) [2]int64 {
	t.Helper()
	n := orgInt(t, r.env, r.org, `SELECT coalesce(sum(recipients * 1000 + actions), 0) FROM agent_policy_usage WHERE policy_id = $1`, policy)
	return [2]int64{n / 1000, n % 1000}
}

// leads lists the addresses of the campaign's leads, sorted.
func (r *gateRig) leads(t *testing.T, camp uuid.UUID) []string {
	t.Helper()
	var out []string
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT c.email FROM campaign_leads l JOIN contacts c ON c.organization_id = l.organization_id
  AND c.id = l.contact_id WHERE l.organization_id = $1 AND l.campaign_id = $2 ORDER BY c.email`, r.org, camp)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return out
}

// decide decides approval id as the owner.
func (r *gateRig) decide(t *testing.T, id uuid.UUID, d api.ApprovalsDecideReqDecision) *api.SendApproval {
	t.Helper()
	a, err := r.owner.ApprovalsDecide(context.Background(), &api.ApprovalsDecideReq{Decision: d}, api.ApprovalsDecideParams{ID: id})
	require.NoError(t, err)
	return a
}

// payload reads the approval's payload as a person sees it at /approvals.
func (r *gateRig) payload(t *testing.T, id uuid.UUID) map[string]any {
	t.Helper()
	list, err := r.owner.ApprovalsList(context.Background())
	require.NoError(t, err)
	for _, a := range list.Data {
		if a.ID.Value == id {
			require.Equal(t, api.SendApprovalActionTypeCampaignLaunch, a.ActionType.Value)
			require.Equal(t, api.SendApprovalStatusPending, a.Status.Value)
			out := map[string]any{}
			for k, v := range a.Payload.Value {
				var x any
				require.NoError(t, json.Unmarshal(v, &x))
				out[k] = x
			}
			return out
		}
	}
	t.Fatalf("approval %s is not listed", id)
	return nil
}

// requireHeld checks a held answer's approval: awaiting a person for leads of campaigns, its reasons
// containing why, announced and audited.
func (r *gateRig) requireHeld(t *testing.T, h api.HeldLeads, campaigns []uuid.UUID, leads int, why string) {
	t.Helper()
	require.Equal(t, api.HeldLeadsResultAwaitingApproval, h.Result)
	require.Equal(t, campaigns, h.CampaignIds)
	require.Equal(t, leads, h.Leads)
	require.Contains(t, strings.Join(h.Reasons, " "), why)
	require.Equal(t, strings.TrimRight(r.env.Config.AppURL, "/")+"/approvals/"+h.ApprovalID.String(), h.ApprovalURL.String())
	require.WithinDuration(t, time.Now().Add(30*time.Minute), h.ExpiresAt, time.Minute)
	require.EqualValues(t, 1, orgInt(t, r.env, r.org, `SELECT count(*) FROM event_outbox WHERE event_type = 'approval.requested'
  AND data->>'approval_id' = $1`, h.ApprovalID.String()), "approval.requested is raised")
	require.EqualValues(t, 1, orgInt(t, r.env, r.org, `SELECT count(*) FROM audit_log WHERE event = 'approval.requested'
  AND target_id = $1 AND metadata->>'operation' <> ''`, h.ApprovalID.String()), "the held request is audited")
}

// bulkAdd adds the contacts to the campaigns by PATCH /contacts as c.
func bulkAdd(t *testing.T, c *api.Client, contacts []uuid.UUID, campaigns ...uuid.UUID) api.ContactsBulkUpdateRes {
	t.Helper()
	res, err := c.ContactsBulkUpdate(context.Background(), &api.ContactBulkUpdateRequest{Contacts: contacts, AddCampaigns: campaigns},
		api.ContactsBulkUpdateParams{})
	require.NoError(t, err)
	return res
}

func heldContacts(t *testing.T, res any) *api.ContactsHeld {
	t.Helper()
	h, ok := res.(*api.ContactsHeld)
	require.True(t, ok, "want 202 awaiting_approval, got %T", res)
	return h
}

func TestAnAgentAddingLeadsToAnActiveCampaignByPatchContactsWaitsForAPersonUnlessItsPolicyAllowsThem(t *testing.T) {
	t.Parallel()
	r := newGateRig(t)
	ids := r.contacts(t, "ann@client.example", "ben@client.example", "cat@client.example", "dan@client.example",
		"eve@client.example", "fay@client.example")
	ann, ben, cat, dan, eve, fay := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]

	// Without a policy: the draft campaign's leads are added (nothing is mailed until a start, which is gated);
	// the active campaign's wait for a person, and nothing of them is written.
	h := heldContacts(t, bulkAdd(t, r.agent, []uuid.UUID{ann, ben}, r.active, r.draft))
	r.requireHeld(t, h.Approval, []uuid.UUID{r.active}, 2, "The API key has no agent policy.")
	require.Len(t, h.Contacts, 2)
	for _, c := range h.Contacts {
		require.Equal(t, []api.MiniCampaign{{ID: r.draft.String(), Name: "Draft"}}, c.Campaigns, "the answer shows what was added")
	}
	require.Equal(t, []string{"first@client.example"}, r.leads(t, r.active), "no lead until a person approves")
	require.Equal(t, []string{"ann@client.example", "ben@client.example"}, r.leads(t, r.draft))
	p := r.payload(t, h.Approval.ApprovalID)
	require.Equal(t, "campaign.add_leads", p["operation"])
	require.Equal(t, "contacts.bulk_updated", p["event"])
	require.EqualValues(t, 2, p["leads"])
	require.Equal(t, []any{"ann@client.example", "ben@client.example"}, p["sample"])

	// A person approves: the leads are added then, and a human decision counts against no policy.
	a := r.decide(t, h.Approval.ApprovalID, api.ApprovalsDecideReqDecisionApproved)
	require.Equal(t, api.SendApprovalStatusExecuted, a.Status.Value)
	var added int
	resultField(t, a, "leads_added", &added)
	require.Equal(t, 2, added)
	require.Equal(t, []string{"ann@client.example", "ben@client.example", "first@client.example"}, r.leads(t, r.active))
	require.EqualValues(t, 1, orgInt(t, r.env, r.org, `SELECT count(*) FROM audit_log WHERE event = 'contacts.bulk_updated'
  AND metadata->>'approval_id' = $1`, a.ID.Value.String()), "the approved request is audited with its approval")

	// A denied request adds nothing.
	h = heldContacts(t, bulkAdd(t, r.agent, []uuid.UUID{cat}, r.active))
	require.Equal(t, api.SendApprovalStatusDenied, r.decide(t, h.Approval.ApprovalID, api.ApprovalsDecideReqDecisionDenied).Status.Value)
	require.NotContains(t, r.leads(t, r.active), "cat@client.example")

	// Under a policy: within its limits the leads are added at once and counted; leads the campaign has
	// already count nothing.
	pol := r.grant(t, nil)
	res := bulkAdd(t, r.agent, []uuid.UUID{cat, dan, ann}, r.active)
	require.Len(t, bulkUpdatedOK(t, res), 3)
	require.Contains(t, r.leads(t, r.active), "dan@client.example")
	require.Equal(t, [2]int64{2, 1}, r.usage(t, pol), "two new leads, one action")
	bulkUpdatedOK(t, bulkAdd(t, r.agent, []uuid.UUID{ann, ben}, r.active))
	require.Equal(t, [2]int64{2, 1}, r.usage(t, pol), "adding existing leads is no action")

	// Past the per-run limit, or the day's, the leads wait for a person and nothing is counted.
	gus := r.contacts(t, "gus@client.example")[0]
	h = heldContacts(t, bulkAdd(t, r.agent, []uuid.UUID{eve, fay, gus}, r.active))
	r.requireHeld(t, h.Approval, []uuid.UUID{r.active}, 3, "the policy allows 2 per run (max_recipients_per_run)")
	require.Equal(t, [2]int64{2, 1}, r.usage(t, pol))
	bulkUpdatedOK(t, bulkAdd(t, r.agent, []uuid.UUID{eve, fay}, r.active))
	require.Equal(t, [2]int64{4, 2}, r.usage(t, pol))
	h = heldContacts(t, bulkAdd(t, r.agent, []uuid.UUID{gus}, r.active))
	r.requireHeld(t, h.Approval, []uuid.UUID{r.active}, 1, "the policy allows 4 a day (max_recipients_per_day)")
	require.NotContains(t, r.leads(t, r.active), "gus@client.example")

	// A person is never held.
	bulkUpdatedOK(t, bulkAdd(t, r.owner, []uuid.UUID{gus}, r.active))
	require.Contains(t, r.leads(t, r.active), "gus@client.example")
	require.Equal(t, [2]int64{4, 2}, r.usage(t, pol))
}

func TestAnAgentsContactWritesNamingAnActiveCampaignWaitForAPersonUnlessItsPolicyAllowsThem(t *testing.T) {
	t.Parallel()
	r := newGateRig(t)
	ctx := context.Background()

	// POST /contacts: the contacts are created; their leads of the active campaign wait.
	res, err := r.agent.ContactsCreate(ctx, []api.ContactCreate{{Email: "ann@client.example", Campaigns: []uuid.UUID{r.active, r.draft}},
		{Email: "ben@client.example", Campaigns: []uuid.UUID{r.active}}}, api.ContactsCreateParams{})
	require.NoError(t, err)
	created := heldContacts(t, res)
	r.requireHeld(t, created.Approval, []uuid.UUID{r.active}, 2, "The API key has no agent policy.")
	require.Equal(t, []string{"ann@client.example", "ben@client.example"}, contactEmails(created.Contacts))
	require.Equal(t, []string{"first@client.example"}, r.leads(t, r.active))
	require.Equal(t, []string{"ann@client.example"}, r.leads(t, r.draft))

	// PATCH /contacts/{id}: the other fields change at once; the new lead waits.
	cat := r.contacts(t, "cat@client.example")[0]
	up, err := r.agent.ContactsUpdate(ctx, &api.ContactUpdate{Company: api.NewOptString("Cat Co"), Campaigns: []uuid.UUID{r.active}},
		api.ContactsUpdateParams{ID: cat})
	require.NoError(t, err)
	updated, ok := up.(*api.ContactHeld)
	require.True(t, ok, "want 202, got %T", up)
	r.requireHeld(t, updated.Approval, []uuid.UUID{r.active}, 1, "The API key has no agent policy.")
	require.Equal(t, "Cat Co", updated.Contact.Company)
	require.Empty(t, updated.Contact.Campaigns)
	require.Equal(t, "contacts.updated", r.payload(t, updated.Approval.ApprovalID)["event"])

	// A contact deleted before the decision is not added; approving adds the rest.
	err = r.owner.ContactsDelete(ctx, api.ContactsDeleteParams{ID: created.Contacts[1].ID})
	require.NoError(t, err)
	a := r.decide(t, created.Approval.ApprovalID, api.ApprovalsDecideReqDecisionApproved)
	require.Equal(t, api.SendApprovalStatusExecuted, a.Status.Value)
	require.Equal(t, []string{"ann@client.example", "first@client.example"}, r.leads(t, r.active))
	// Deleting everything an approval held leaves nothing to add: it stays approved, with the refusal.
	err = r.owner.ContactsDelete(ctx, api.ContactsDeleteParams{ID: cat})
	require.NoError(t, err)
	a = r.decide(t, updated.Approval.ApprovalID, api.ApprovalsDecideReqDecisionApproved)
	require.Equal(t, api.SendApprovalStatusApproved, a.Status.Value)
	var refusal struct{ Code string }
	resultField(t, a, "error", &refusal)
	require.Equal(t, "nothing_to_add", refusal.Code)

	// Under a policy, within its limits: added at once and counted, by both writes.
	pol := r.grant(t, nil)
	res, err = r.agent.ContactsCreate(ctx, []api.ContactCreate{{Email: "dan@client.example", Campaigns: []uuid.UUID{r.active}}}, api.ContactsCreateParams{})
	require.NoError(t, err)
	require.Equal(t, []api.MiniCampaign{{ID: r.active.String(), Name: "Active"}}, createdOK(t, res)[0].Campaigns)
	eve := r.contacts(t, "eve@client.example")[0]
	up, err = r.agent.ContactsUpdate(ctx, &api.ContactUpdate{Campaigns: []uuid.UUID{r.active}}, api.ContactsUpdateParams{ID: eve})
	require.NoError(t, err)
	require.Len(t, contactUpdatedOK(t, up).Campaigns, 1)
	require.Equal(t, [2]int64{2, 2}, r.usage(t, pol))

	// Past the per-run limit: held, nothing counted.
	res, err = r.agent.ContactsCreate(ctx, []api.ContactCreate{{Email: "fay@client.example", Campaigns: []uuid.UUID{r.active}},
		{Email: "gus@client.example", Campaigns: []uuid.UUID{r.active}}, {Email: "hal@client.example", Campaigns: []uuid.UUID{r.active}}},
		api.ContactsCreateParams{})
	require.NoError(t, err)
	r.requireHeld(t, heldContacts(t, res).Approval, []uuid.UUID{r.active}, 3, "max_recipients_per_run")
	require.Equal(t, [2]int64{2, 2}, r.usage(t, pol))

	// A person's writes are never held.
	res, err = r.owner.ContactsCreate(ctx, []api.ContactCreate{{Email: "ivy@client.example", Campaigns: []uuid.UUID{r.active}}}, api.ContactsCreateParams{})
	require.NoError(t, err)
	createdOK(t, res)
	require.Contains(t, r.leads(t, r.active), "ivy@client.example")
}
