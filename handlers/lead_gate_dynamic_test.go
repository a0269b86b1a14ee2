package handlers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
)

// dynamicRig is a gate rig whose active campaign is also linked (by the owner) to the dynamic segment "Hot":
// contacts whose custom field stage is hot.
type dynamicRig struct {
	*gateRig
	hot uuid.UUID
}

func newDynamicRig(t *testing.T) *dynamicRig {
	t.Helper()
	r := &dynamicRig{gateRig: newGateRig(t)}
	r.hot = segCreate(t, r.owner, api.SegmentCreate{Name: "Hot", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindDynamic),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{
			{Name: "stage", Value: "hot", Type: api.ContactCustomFieldFilterTypeEqual}}})}).ID
	r.link(t, r.hot)
	return r
}

// link replaces the active campaign's segments with segments, as the owner.
func (r *dynamicRig) link(t *testing.T, segments ...uuid.UUID) {
	t.Helper()
	res, err := r.owner.CampaignsUpdate(context.Background(), &api.CampaignUpdate{SegmentIds: segments}, api.CampaignsUpdateParams{ID: r.active})
	require.NoError(t, err)
	require.Equal(t, segments, campaignUpdatedOK(t, res).SegmentIds)
}

// stage sets the contact's custom field stage by PATCH /contacts/{id} as c.
func (r *dynamicRig) stage(t *testing.T, c *api.Client, id uuid.UUID, value string) api.ContactsUpdateRes {
	t.Helper()
	res, err := c.ContactsUpdate(context.Background(), &api.ContactUpdate{CustomFields: api.NewOptContactUpdateCustomFields(
		api.ContactUpdateCustomFields{"stage": value})}, api.ContactsUpdateParams{ID: id})
	require.NoError(t, err)
	return res
}

// enrollDue runs the periodic enrolment of linked segments' new members.
func (r *dynamicRig) enrollDue(t *testing.T) {
	t.Helper()
	_, err := campaign.EnrollDue(context.Background(), r.env.DB.Pool, time.Now().Add(time.Minute), 10000)
	require.NoError(t, err)
}

func contactHeld(t *testing.T, res api.ContactsUpdateRes) *api.ContactHeld {
	t.Helper()
	h, ok := res.(*api.ContactHeld)
	require.True(t, ok, "want 202 awaiting_approval, got %T", res)
	return h
}

func TestAnAgentsContactChangeThatBringsAContactIntoADynamicSegmentOfAnActiveCampaignWaitsForAPersonUnlessItsPolicyAllowsIt(t *testing.T) {
	t.Parallel()
	r := newDynamicRig(t)
	ctx := context.Background()
	ids := r.contacts(t, "ann@client.example", "ben@client.example", "cat@client.example", "dan@client.example", "eve@client.example")
	ann, ben, cat, dan, eve := ids[0], ids[1], ids[2], ids[3], ids[4]

	res, err := r.owner.CampaignsUpdate(ctx, &api.CampaignUpdate{SegmentIds: []uuid.UUID{r.hot}}, api.CampaignsUpdateParams{ID: r.draft})
	require.NoError(t, err)
	campaignUpdatedOK(t, res)

	// Without a policy: the field changes, and the lead the segment would take into the active campaign waits
	// for a person; the periodic enrolment leaves it to them. The draft campaign mails nobody: it takes her
	// at once, so that its (gated) start counts her.
	h := contactHeld(t, r.stage(t, r.agent, ann, "hot"))
	r.requireHeld(t, h.Approval, []uuid.UUID{r.active}, 1, "The API key has no agent policy.")
	require.Equal(t, "hot", h.Contact.CustomFields["stage"])
	require.Equal(t, []api.MiniCampaign{{ID: r.draft.String(), Name: "Draft"}}, h.Contact.Campaigns)
	p := r.payload(t, h.Approval.ApprovalID)
	require.Equal(t, "contacts.updated", p["event"])
	require.Equal(t, []any{map[string]any{"id": r.hot.String(), "name": "Hot", "leads": float64(1)}}, p["joined_segments"])
	require.Equal(t, []any{"ann@client.example"}, p["sample"])
	r.enrollDue(t)
	require.Equal(t, []string{"first@client.example"}, r.leads(t, r.active))
	a := r.decide(t, h.Approval.ApprovalID, api.ApprovalsDecideReqDecisionApproved)
	require.Equal(t, api.SendApprovalStatusExecuted, a.Status.Value)
	require.Equal(t, []string{"ann@client.example", "first@client.example"}, r.leads(t, r.active), "approving adds the lead")

	// Denied, the contact stays out for as long as it matches; changing it again brings nobody new, so
	// nothing is asked again.
	h = contactHeld(t, r.stage(t, r.agent, ben, "hot"))
	r.decide(t, h.Approval.ApprovalID, api.ApprovalsDecideReqDecisionDenied)
	r.enrollDue(t)
	require.NotContains(t, r.leads(t, r.active), "ben@client.example")
	up, err := r.agent.ContactsUpdate(ctx, &api.ContactUpdate{Company: api.NewOptString("Ben Co")}, api.ContactsUpdateParams{ID: ben})
	require.NoError(t, err)
	require.Equal(t, "Ben Co", contactUpdatedOK(t, up).Company)

	// POST /contacts: a contact created matching the segment waits too.
	created := heldContacts(t, func() api.ContactsCreateRes {
		res, err := r.agent.ContactsCreate(ctx, []api.ContactCreate{{Email: "new@client.example",
			CustomFields: api.NewOptContactCreateCustomFields(api.ContactCreateCustomFields{"stage": "hot"})}}, api.ContactsCreateParams{})
		require.NoError(t, err)
		return res
	}())
	r.requireHeld(t, created.Approval, []uuid.UUID{r.active}, 1, "The API key has no agent policy.")
	require.Equal(t, "contacts.created", r.payload(t, created.Approval.ApprovalID)["event"])

	// Under a policy (one recipient a day): within it the lead is added at once and counted.
	pol := r.grant(t, func(p *api.AgentPolicy) { p.MaxRecipientsPerDay = 1 })
	require.Len(t, contactUpdatedOK(t, r.stage(t, r.agent, cat, "hot")).Campaigns, 2, "the active campaign and the draft")
	require.Equal(t, [2]int64{1, 1}, r.usage(t, pol))

	// A change that brings nobody new in counts nothing: dan matched before it (a person set him hot; the
	// periodic enrolment, not the agent, adds him), eve matches no segment after it.
	contactUpdatedOK(t, r.stage(t, r.owner, dan, "hot"))
	up, err = r.agent.ContactsUpdate(ctx, &api.ContactUpdate{Company: api.NewOptString("Dan Co")}, api.ContactsUpdateParams{ID: dan})
	require.NoError(t, err)
	require.Empty(t, contactUpdatedOK(t, up).Campaigns, "the periodic enrolment adds him")
	contactUpdatedOK(t, r.stage(t, r.agent, eve, "cold"))
	require.Equal(t, [2]int64{1, 1}, r.usage(t, pol))
	r.enrollDue(t)
	require.Contains(t, r.leads(t, r.active), "dan@client.example")

	// Past the day's limit: held, nothing counted, nothing enrolled.
	h = contactHeld(t, r.stage(t, r.agent, eve, "hot"))
	r.requireHeld(t, h.Approval, []uuid.UUID{r.active}, 1, "the policy allows 1 a day (max_recipients_per_day)")
	require.Equal(t, [2]int64{1, 1}, r.usage(t, pol))
	r.enrollDue(t)
	require.NotContains(t, r.leads(t, r.active), "eve@client.example")
}

// bulkStage sets the custom field stage of the contacts by PATCH /contacts as c.
func bulkStage(t *testing.T, c *api.Client, contacts []uuid.UUID, value string) api.ContactsBulkUpdateRes {
	t.Helper()
	res, err := c.ContactsBulkUpdate(context.Background(), &api.ContactBulkUpdateRequest{Contacts: contacts, Fields: []api.ContactBulkFieldOp{
		{Type: api.ContactBulkFieldOpTypeEDIT, Key: "stage", Value: api.NewOptString(value)}}}, api.ContactsBulkUpdateParams{})
	require.NoError(t, err)
	return res
}

func TestAnAgentsBulkUpdateThatBringsContactsIntoDynamicSegmentsOfAnActiveCampaignCountsOnlyTheNewLeads(t *testing.T) {
	t.Parallel()
	r := newDynamicRig(t)
	ids := r.contacts(t, "ann@client.example", "ben@client.example", "cat@client.example", "dan@client.example",
		"eve@client.example", "fay@client.example", "gus@client.example")
	ann, ben, cat, dan, eve, fay, gus := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6]
	contactUpdatedOK(t, r.stage(t, r.owner, ann, "hot"))
	r.enrollDue(t)
	require.Contains(t, r.leads(t, r.active), "ann@client.example")
	pol := r.grant(t, nil) // 2 recipients a run, 4 a day

	// Four contacts set hot: ann is a lead already, so three new leads, past the per-run limit: they wait,
	// the fields change.
	h := heldContacts(t, bulkStage(t, r.agent, []uuid.UUID{ann, ben, cat, dan}, "hot"))
	r.requireHeld(t, h.Approval, []uuid.UUID{r.active}, 3, "the policy allows 2 per run (max_recipients_per_run)")
	for _, c := range h.Contacts {
		require.Equal(t, "hot", c.CustomFields["stage"])
	}
	require.Equal(t, [2]int64{0, 0}, r.usage(t, pol))
	r.enrollDue(t)
	require.Equal(t, []string{"ann@client.example", "first@client.example"}, r.leads(t, r.active))

	// Within the limit they are added at once and counted; a contact that was hot before counts nothing.
	require.Len(t, bulkUpdatedOK(t, bulkStage(t, r.agent, []uuid.UUID{ann, eve, fay}, "hot")), 3)
	require.Equal(t, [2]int64{2, 1}, r.usage(t, pol))
	require.Subset(t, r.leads(t, r.active), []string{"eve@client.example", "fay@client.example"})

	// A segment may select by campaign membership: adding gus to the draft campaign brings him into the
	// segment of the draft's contacts linked to the active campaign, a new lead of it counted with the write.
	drafted := segCreate(t, r.owner, api.SegmentCreate{Name: "Drafted", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindDynamic),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{CampaignIds: []string{r.draft.String()}})}).ID
	r.link(t, r.hot, drafted)
	bulkUpdatedOK(t, bulkAdd(t, r.agent, []uuid.UUID{gus}, r.draft))
	require.Equal(t, [2]int64{3, 2}, r.usage(t, pol))
	require.Contains(t, r.leads(t, r.active), "gus@client.example")

	// Approving the held request adds the three leads; a person decided, so nothing is counted.
	r.decide(t, h.Approval.ApprovalID, api.ApprovalsDecideReqDecisionApproved)
	require.Subset(t, r.leads(t, r.active), []string{"ben@client.example", "cat@client.example", "dan@client.example"})
	require.Equal(t, [2]int64{3, 2}, r.usage(t, pol))
}

// stageImport imports rows "address,stage" with dedup update as c.
func stageImport(t *testing.T, c *api.Client, rows string) api.ContactsImportCommitRes {
	t.Helper()
	opts := impOpts{Mapping: impCols("email", "custom:stage"), Dedup: "update"}
	res, err := c.ContactsImportCommit(context.Background(), &api.ContactsImportCommitReq{File: impFile("stages.csv", []byte(rows)),
		Options: opts.String()}, api.ContactsImportCommitParams{})
	require.NoError(t, err)
	return res
}

func TestAnAgentsImportThatBringsContactsIntoADynamicSegmentOfAnActiveCampaignWaitsForAPersonUnlessItsPolicyAllowsIt(t *testing.T) {
	t.Parallel()
	r := newDynamicRig(t)
	r.contacts(t, "ann@client.example", "ben@client.example", "cat@client.example")

	// Without a policy: ann updated to hot and a new hot contact are two new leads, which wait; ben stays
	// cold. Every row is imported.
	res := stageImport(t, r.agent, "ann@client.example,hot\nben@client.example,cold\nnew@client.example,hot\n")
	held, ok := res.(*api.ContactsImportCommitAccepted)
	require.True(t, ok, "want 202, got %T", res)
	require.Equal(t, 1, held.Imported)
	require.Equal(t, 2, held.Updated)
	r.requireHeld(t, held.Approval.Value, []uuid.UUID{r.active}, 2, "The API key has no agent policy.")
	p := r.payload(t, held.Approval.Value.ApprovalID)
	require.Equal(t, "contacts.imported", p["event"])
	require.Equal(t, []any{"ann@client.example", "new@client.example"}, p["sample"])
	r.enrollDue(t)
	require.Equal(t, []string{"first@client.example"}, r.leads(t, r.active))

	// Under a policy: the same file again brings nobody new (they matched before it); cat set hot is one
	// new lead, added at once and counted.
	pol := r.grant(t, nil)
	require.False(t, importedOK(t, stageImport(t, r.agent, "ann@client.example,hot\nnew@client.example,hot\n")).Approval.Set)
	require.Equal(t, [2]int64{0, 0}, r.usage(t, pol))
	require.False(t, importedOK(t, stageImport(t, r.agent, "cat@client.example,hot\n")).Approval.Set)
	require.Equal(t, [2]int64{1, 1}, r.usage(t, pol))
	require.Equal(t, []string{"cat@client.example", "first@client.example"}, r.leads(t, r.active))
}

func TestAPersonsChangeThatBringsAContactIntoADynamicSegmentIsNotGatedAndARefusalEndsWhenTheContactLeaves(t *testing.T) {
	t.Parallel()
	r := newDynamicRig(t)
	ids := r.contacts(t, "ann@client.example", "ben@client.example", "cat@client.example")
	ann, ben, cat := ids[0], ids[1], ids[2]
	pol := r.grant(t, func(p *api.AgentPolicy) { p.MaxRecipientsPerDay = 1 })
	contactUpdatedOK(t, r.stage(t, r.agent, cat, "hot"))
	require.Equal(t, [2]int64{1, 1}, r.usage(t, pol), "the agent's day is used up")

	// A person's change, one contact or many, is written and answered at once; the periodic enrolment
	// adds the new members as before, and no policy is asked or counted.
	contactUpdatedOK(t, r.stage(t, r.owner, ann, "hot"))
	require.Len(t, bulkUpdatedOK(t, bulkStage(t, r.owner, []uuid.UUID{ben}, "hot")), 1)
	require.EqualValues(t, 0, orgInt(t, r.env, r.org, `SELECT count(*) FROM approvals`))
	require.Equal(t, [2]int64{1, 1}, r.usage(t, pol))
	r.enrollDue(t)
	require.Equal(t, []string{"ann@client.example", "ben@client.example", "cat@client.example", "first@client.example"}, r.leads(t, r.active))

	// An agent's held member refused by a person stays out while it matches; once it has left (seen by an
	// enrolment run), a person bringing it back in has it enrolled as before.
	dan := r.contacts(t, "dan@client.example")[0]
	h := contactHeld(t, r.stage(t, r.agent, dan, "hot"))
	r.decide(t, h.Approval.ApprovalID, api.ApprovalsDecideReqDecisionDenied)
	contactUpdatedOK(t, r.stage(t, r.owner, dan, "hot"))
	r.enrollDue(t)
	require.NotContains(t, r.leads(t, r.active), "dan@client.example")
	contactUpdatedOK(t, r.stage(t, r.owner, dan, "cold"))
	r.enrollDue(t)
	contactUpdatedOK(t, r.stage(t, r.owner, dan, "hot"))
	r.enrollDue(t)
	require.Contains(t, r.leads(t, r.active), "dan@client.example")
}

func TestConcurrentAgentChangesBringingContactsIntoADynamicSegmentCountEachNewLeadOnceWithinTheDaysLimit(t *testing.T) {
	t.Parallel()
	r := newDynamicRig(t)
	ids := r.contacts(t, "ann@client.example", "ben@client.example", "cat@client.example", "dan@client.example",
		"eve@client.example", "fay@client.example")
	pol := r.grant(t, func(p *api.AgentPolicy) { p.MaxRecipientsPerDay = 3 })

	// Six changes at once, each bringing one contact in: three fit the day and are enrolled and counted, the
	// other three wait for a person; none is lost or counted twice.
	type answer struct {
		res api.ContactsUpdateRes
		err error
	}
	answers := make(chan answer, len(ids))
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			res, err := r.agent.ContactsUpdate(context.Background(), &api.ContactUpdate{CustomFields: api.NewOptContactUpdateCustomFields(
				api.ContactUpdateCustomFields{"stage": "hot"})}, api.ContactsUpdateParams{ID: id})
			answers <- answer{res, err}
		})
	}
	wg.Wait()
	close(answers)
	held := 0
	for a := range answers {
		require.NoError(t, a.err)
		if _, ok := a.res.(*api.ContactHeld); ok {
			held++
		} else {
			require.Len(t, contactUpdatedOK(t, a.res).Campaigns, 1)
		}
	}
	require.Equal(t, 3, held)
	require.Equal(t, [2]int64{3, 3}, r.usage(t, pol))
	require.Len(t, r.leads(t, r.active), 1+3)
	r.enrollDue(t)
	require.Len(t, r.leads(t, r.active), 1+3, "the held ones stay with the person")
	require.EqualValues(t, 3, orgInt(t, r.env, r.org, `SELECT count(*) FROM held_leads WHERE via_segment`))
}
