package handlers_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/jobs"
)

// agentImport imports rows (one address a line) as c, naming campaigns and segments.
func (r *gateRig) agentImport(t *testing.T, c *api.Client, rows string, campaigns, segments []uuid.UUID) api.ContactsImportCommitRes {
	t.Helper()
	opts := impOpts{Mapping: impCols("email"), Dedup: "update"}
	for _, id := range campaigns {
		opts.CampaignIDs = append(opts.CampaignIDs, id.String())
	}
	for _, id := range segments {
		opts.SegmentIDs = append(opts.SegmentIDs, id.String())
	}
	res, err := c.ContactsImportCommit(context.Background(), &api.ContactsImportCommitReq{File: impFile("leads.csv", []byte(rows)),
		Options: opts.String()}, api.ContactsImportCommitParams{})
	require.NoError(t, err)
	return res
}

func TestAnAgentsImportNamingAnActiveCampaignWaitsForAPersonUnlessItsPolicyAllowsIt(t *testing.T) {
	t.Parallel()
	r := newGateRig(t)

	// The contacts are imported and linked to the draft campaign; the active campaign's leads wait.
	res := r.agentImport(t, r.agent, "ann@client.example\nben@client.example\ncat@client.example\n", []uuid.UUID{r.active, r.draft}, nil)
	held, ok := res.(*api.ContactsImportCommitAccepted)
	require.True(t, ok, "want 202, got %T", res)
	require.Equal(t, 3, held.Imported)
	r.requireHeld(t, held.Approval.Value, []uuid.UUID{r.active}, 3, "The API key has no agent policy.")
	require.Equal(t, []string{"first@client.example"}, r.leads(t, r.active))
	require.Len(t, r.leads(t, r.draft), 3)
	p := r.payload(t, held.Approval.Value.ApprovalID)
	require.Equal(t, "contacts.imported", p["event"])
	require.EqualValues(t, 3, p["contacts"])

	a := r.decide(t, held.Approval.Value.ApprovalID, api.ApprovalsDecideReqDecisionApproved)
	require.Equal(t, api.SendApprovalStatusExecuted, a.Status.Value)
	require.Equal(t, []string{"ann@client.example", "ben@client.example", "cat@client.example", "first@client.example"}, r.leads(t, r.active))

	// Under a policy: a file past the per-run limit waits; one within it is linked at once and counted.
	pol := r.grant(t, nil)
	res = r.agentImport(t, r.agent, "dan@client.example\neve@client.example\nfay@client.example\n", []uuid.UUID{r.active}, nil)
	held, ok = res.(*api.ContactsImportCommitAccepted)
	require.True(t, ok, "want 202, got %T", res)
	r.requireHeld(t, held.Approval.Value, []uuid.UUID{r.active}, 3, "max_recipients_per_run")
	require.Equal(t, [2]int64{0, 0}, r.usage(t, pol))
	res = r.agentImport(t, r.agent, "ann@client.example\ndan@client.example\neve@client.example\n", []uuid.UUID{r.active}, nil)
	require.False(t, importedOK(t, res).Approval.Set)
	require.Equal(t, [2]int64{2, 1}, r.usage(t, pol), "ann was a lead already: two new leads")
	require.Contains(t, r.leads(t, r.active), "eve@client.example")

	// A person's import is never held.
	res = r.agentImport(t, r.owner, "fay@client.example\ngus@client.example\nhal@client.example\n", []uuid.UUID{r.active}, nil)
	importedOK(t, res)
	require.Len(t, r.leads(t, r.active), 9)

	// Pins into a segment linked to the active campaign (segment_ids) are leads of it too: past the policy they
	// wait, and the import says so.
	seg := segCreate(t, r.owner, api.SegmentCreate{Name: "Imported", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindStatic)})
	up, err := r.owner.CampaignsUpdate(context.Background(), &api.CampaignUpdate{SegmentIds: []uuid.UUID{seg.ID}}, api.CampaignsUpdateParams{ID: r.active})
	require.NoError(t, err)
	campaignUpdatedOK(t, up)
	res = r.agentImport(t, r.agent, "ivy@client.example\njon@client.example\nkim@client.example\n", nil, []uuid.UUID{seg.ID})
	held, ok = res.(*api.ContactsImportCommitAccepted)
	require.True(t, ok, "want 202, got %T", res)
	r.requireHeld(t, held.Approval.Value, []uuid.UUID{r.active}, 3, "max_recipients_per_run")
	require.Equal(t, []uuid.UUID{seg.ID}, held.Approval.Value.SegmentIds)
	require.Equal(t, 0, held.SegmentsPinned.Value, "the pins wait with their leads")
	require.Equal(t, 0, segGet(t, r.owner, seg.ID).MemberCount)
}

func TestAnAgentLinkingOrFillingASegmentOfAnActiveCampaignWaitsForAPersonUnlessItsPolicyAllowsIt(t *testing.T) {
	t.Parallel()
	r := newGateRig(t)
	ctx := context.Background()
	ids := r.contacts(t, "ann@client.example", "ben@client.example", "cat@client.example", "dan@client.example")
	ann, ben, cat, dan := ids[0], ids[1], ids[2], ids[3]
	static := segCreate(t, r.owner, api.SegmentCreate{Name: "Static", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindStatic)})
	segAdd(t, r.owner, static.ID, api.ContactSelection{Contacts: []uuid.UUID{ann, ben}})
	res, err := r.owner.CampaignsUpdate(ctx, &api.CampaignUpdate{SegmentIds: []uuid.UUID{static.ID}}, api.CampaignsUpdateParams{ID: r.draft})
	require.NoError(t, err)
	campaignUpdatedOK(t, res)

	// Linking a segment to the active campaign: the campaign changes otherwise, the link waits.
	up, err := r.agent.CampaignsUpdate(ctx, &api.CampaignUpdate{Name: api.NewOptString("Active, renamed"), SegmentIds: []uuid.UUID{static.ID}},
		api.CampaignsUpdateParams{ID: r.active})
	require.NoError(t, err)
	linked, ok := up.(*api.CampaignHeld)
	require.True(t, ok, "want 202, got %T", up)
	r.requireHeld(t, linked.Approval, []uuid.UUID{r.active}, 2, "The API key has no agent policy.")
	require.Equal(t, []uuid.UUID{static.ID}, linked.Approval.SegmentIds)
	require.Equal(t, "Active, renamed", linked.Campaign.Name)
	require.Empty(t, linked.Campaign.SegmentIds)
	require.Equal(t, []string{"first@client.example"}, r.leads(t, r.active))
	require.Equal(t, "campaign.link_segments", r.payload(t, linked.Approval.ApprovalID)["operation"])
	a := r.decide(t, linked.Approval.ApprovalID, api.ApprovalsDecideReqDecisionApproved)
	require.Equal(t, api.SendApprovalStatusExecuted, a.Status.Value)
	require.Equal(t, []uuid.UUID{static.ID}, campGet(t, r.owner, r.active).SegmentIds)
	require.Equal(t, []string{"ann@client.example", "ben@client.example", "first@client.example"}, r.leads(t, r.active))

	// Pinning contacts into a segment linked to the active campaign adds them as its leads: the pins wait.
	add, err := r.agent.SegmentsMembersAdd(ctx, &api.ContactSelection{Contacts: []uuid.UUID{ann, cat}}, api.SegmentsMembersAddParams{ID: static.ID})
	require.NoError(t, err)
	pinned, ok := add.(*api.SegmentsMembersAddAccepted)
	require.True(t, ok, "want 202, got %T", add)
	require.Equal(t, 0, pinned.Added)
	require.Equal(t, 1, pinned.Unchanged, "ann was a member")
	r.requireHeld(t, pinned.Approval.Value, []uuid.UUID{r.active}, 1, "The API key has no agent policy.")
	require.Equal(t, []uuid.UUID{static.ID}, pinned.Approval.Value.SegmentIds)
	require.Equal(t, 2, segGet(t, r.owner, static.ID).MemberCount, "cat is not pinned yet")
	r.decide(t, pinned.Approval.Value.ApprovalID, api.ApprovalsDecideReqDecisionApproved)
	require.Equal(t, 3, segGet(t, r.owner, static.ID).MemberCount)
	require.Contains(t, r.leads(t, r.active), "cat@client.example", "approving enrolls the pinned at once")
	require.Contains(t, r.leads(t, r.draft), "cat@client.example", "in every campaign linked to the segment")

	// Under a policy a pin within its limits is written and its lead added at once, counted.
	pol := r.grant(t, nil)
	membersAddedOK(t, func() api.SegmentsMembersAddRes {
		res, err := r.agent.SegmentsMembersAdd(ctx, &api.ContactSelection{Contacts: []uuid.UUID{dan}}, api.SegmentsMembersAddParams{ID: static.ID})
		require.NoError(t, err)
		return res
	}())
	require.Contains(t, r.leads(t, r.active), "dan@client.example")
	require.Contains(t, r.leads(t, r.draft), "dan@client.example", "a draft's lead too, so that its start counts it")
	require.Equal(t, [2]int64{1, 1}, r.usage(t, pol))

	// A dynamic segment's filters changed under the active campaign: allowed within the policy (its new
	// members enrolled and counted), refused past it.
	eve := r.contacts(t, "eve@client.example", "fay@client.example", "gus@client.example")
	for _, id := range eve {
		_, err := r.owner.ContactsUpdate(ctx, &api.ContactUpdate{Company: api.NewOptString("Globex")}, api.ContactsUpdateParams{ID: id})
		require.NoError(t, err)
	}
	dynamic := segCreate(t, r.owner, api.SegmentCreate{Name: "Dynamic", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindDynamic),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{Query: api.NewOptString("nobody-matches-this")})})
	res, err = r.owner.CampaignsUpdate(ctx, &api.CampaignUpdate{SegmentIds: []uuid.UUID{static.ID, dynamic.ID}}, api.CampaignsUpdateParams{ID: r.active})
	require.NoError(t, err)
	campaignUpdatedOK(t, res)
	_, err = r.agent.SegmentsUpdate(ctx, &api.SegmentUpdate{Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{
		Query: api.NewOptString("globex")})}, api.SegmentsUpdateParams{ID: dynamic.ID})
	requireAPIError(t, err, http.StatusForbidden, "agent_policy_required")
	require.Equal(t, 0, segGet(t, r.owner, dynamic.ID).MemberCount, "a refused change changes nothing")
	require.Equal(t, [2]int64{1, 1}, r.usage(t, pol))
	_, err = r.agent.SegmentsUpdate(ctx, &api.SegmentUpdate{Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{
		Query: api.NewOptString("fay@client")})}, api.SegmentsUpdateParams{ID: dynamic.ID})
	require.NoError(t, err)
	require.Contains(t, r.leads(t, r.active), "fay@client.example", "enrolled with the change it was counted with")
	require.Equal(t, [2]int64{2, 2}, r.usage(t, pol))

	// A person links, pins and changes filters as before.
	other := r.campaign(t, "Other")
	createContacts(t, r.owner, api.ContactCreate{Email: "hal@client.example", Campaigns: []uuid.UUID{other}})
	_, err = r.owner.CampaignsStart(ctx, api.CampaignsStartParams{ID: other})
	require.NoError(t, err)
	res, err = r.owner.CampaignsUpdate(ctx, &api.CampaignUpdate{SegmentIds: []uuid.UUID{static.ID}}, api.CampaignsUpdateParams{ID: other})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{static.ID}, campaignUpdatedOK(t, res).SegmentIds)
	require.Len(t, r.leads(t, other), 5)
}

func TestAnAgentDoesNotRestartACompletedCampaignByAddingLeadsAndPausedCampaignsWaitForTheirGatedResume(t *testing.T) {
	t.Parallel()
	r := newGateRig(t)
	ctx := context.Background()
	ids := r.contacts(t, "ann@client.example", "ben@client.example", "cat@client.example")
	ann, ben, cat := ids[0], ids[1], ids[2]
	res, err := r.owner.CampaignsUpdate(ctx, &api.CampaignUpdate{Status: api.NewOptCampaignStatus(api.CampaignStatusCompleted)},
		api.CampaignsUpdateParams{ID: r.active})
	require.NoError(t, err)
	require.Equal(t, api.CampaignStatusCompleted, campaignUpdatedOK(t, res).Status)
	restartDue := func() bool {
		return orgInt(t, r.env, r.org, `SELECT count(*) FROM campaigns WHERE id = $1 AND restart_due`, r.active) == 1
	}
	eng := engine.New(r.env.DB.Pool, engine.Options{AuthGrace: 72 * time.Hour})
	inserter, err := jobs.NewClient(jobs.Deps{Pool: r.env.DB.Pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{})
	require.NoError(t, err)
	runEngine := func() {
		_, err := eng.RunDue(ctx, inserter)
		require.NoError(t, err)
	}

	// Without a policy the lead waits: the campaign stays completed and the engine finds nothing to restart.
	h := heldContacts(t, bulkAdd(t, r.agent, []uuid.UUID{ann}, r.active))
	r.requireHeld(t, h.Approval, []uuid.UUID{r.active}, 1, "The API key has no agent policy.")
	require.Equal(t, []any{map[string]any{"id": r.active.String(), "name": "Active", "status": "completed", "leads": float64(1)}},
		r.payload(t, h.Approval.ApprovalID)["campaigns"])
	require.False(t, restartDue())
	runEngine()
	require.Equal(t, api.CampaignStatusCompleted, campGet(t, r.owner, r.active).Status)
	require.Zero(t, orgInt(t, r.env, r.org, `SELECT count(*) FROM send_tasks`), "nothing is mailed")

	// Within a policy the lead is added and counted, and the engine restarts the campaign for it.
	pol := r.grant(t, nil)
	bulkUpdatedOK(t, bulkAdd(t, r.agent, []uuid.UUID{ben}, r.active))
	require.Equal(t, [2]int64{1, 1}, r.usage(t, pol))
	require.True(t, restartDue())
	runEngine()
	require.Equal(t, api.CampaignStatusActive, campGet(t, r.owner, r.active).Status, "the counted lead restarts it")

	// A paused campaign mails nobody: its leads are added at once and counted by nobody; resuming it is the
	// gated launch, which counts every lead it would mail, the one the agent added among them.
	paused := r.campaign(t, "Paused")
	createContacts(t, r.owner, api.ContactCreate{Email: "dan@client.example", Campaigns: []uuid.UUID{paused}})
	_, err = r.owner.CampaignsStart(ctx, api.CampaignsStartParams{ID: paused})
	require.NoError(t, err)
	_, err = r.owner.CampaignsStop(ctx, api.CampaignsStopParams{ID: paused})
	require.NoError(t, err)
	bulkUpdatedOK(t, bulkAdd(t, r.agent, []uuid.UUID{cat}, paused))
	require.Equal(t, []string{"cat@client.example", "dan@client.example"}, r.leads(t, paused))
	require.Equal(t, [2]int64{1, 1}, r.usage(t, pol))
	_, err = r.agent.CampaignsStart(ctx, api.CampaignsStartParams{ID: paused})
	require.NoError(t, err)
	require.Equal(t, [2]int64{3, 2}, r.usage(t, pol), "resuming counts its two leads, cat among them")
}
