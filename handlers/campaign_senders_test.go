package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// mailbox seeds an active mailbox of org carrying tags.
func (r campaignRig) mailbox(t *testing.T, email string, tags ...uuid.UUID) uuid.UUID {
	t.Helper()
	id := uuid.New()
	orgExec(t, r.env, r.org, `INSERT INTO mailboxes (organization_id, id, email, provider, tags) VALUES ($1, $2, $3, 'smtp_imap', $4)`,
		r.org, id, email, append([]uuid.UUID{}, tags...))
	return id
}

func (r campaignRig) replaceSenders(t *testing.T, id uuid.UUID, senders ...api.CampaignSenderInput) (*api.CampaignSenderList, error) {
	t.Helper()
	return r.c.CampaignsReplaceSenders(context.Background(), &api.CampaignSendersReplace{Senders: append([]api.CampaignSenderInput{}, senders...)},
		api.CampaignsReplaceSendersParams{ID: id})
}

func (r campaignRig) status(t *testing.T, id uuid.UUID) api.CampaignStatus {
	t.Helper()
	c, err := r.c.CampaignsGet(context.Background(), api.CampaignsGetParams{ID: id})
	require.NoError(t, err)
	return c.Status
}

// activate moves a campaign to active by PATCH, which changes nothing else, as the owner (a person: an API
// key would need an agent policy to start it).
func (r campaignRig) activate(t *testing.T, id uuid.UUID) *api.Campaign {
	t.Helper()
	c, err := r.env.Owner(t, "acme").CampaignsUpdate(context.Background(), &api.CampaignUpdate{Status: api.NewOptCampaignStatus(api.CampaignStatusActive)},
		api.CampaignsUpdateParams{ID: id})
	require.NoError(t, err)
	return campaignUpdatedOK(t, c)
}

func TestCampaignSendersAreReplacedWhole(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	m1, m2 := r.mailbox(t, "one@acme.example"), r.mailbox(t, "two@acme.example")
	cmp := r.campaign(t, api.CampaignCreate{Name: "Pool", SenderStrategy: api.NewOptCampaignCreateSenderStrategy(api.CampaignCreateSenderStrategyExplicit),
		Senders: []api.CampaignSenderInput{{EmailAccountID: m1, Weight: api.NewOptInt(3)}}})

	list, err := r.c.CampaignsListSenders(context.Background(), api.CampaignsListSendersParams{ID: cmp.ID})
	require.NoError(t, err)
	require.Equal(t, []api.CampaignSender{{EmailAccountID: m1, Weight: 3, Enabled: true, LastSentAt: api.OptNilDateTime{Set: true, Null: true}}}, list.Data)

	// The new pool comes back in the order sent; a mailbox that stays keeps when it last sent.
	sent := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	orgExec(t, r.env, r.org, `UPDATE campaign_mailboxes SET last_sent_at = $3 WHERE organization_id = $1 AND mailbox_id = $2`, r.org, m1, sent)
	list, err = r.replaceSenders(t, cmp.ID, api.CampaignSenderInput{EmailAccountID: m2, Enabled: api.NewOptBool(false)},
		api.CampaignSenderInput{EmailAccountID: m1, Weight: api.NewOptInt(5)})
	require.NoError(t, err)
	require.Len(t, list.Data, 2)
	require.Equal(t, m2, list.Data[0].EmailAccountID)
	require.Equal(t, 1, list.Data[0].Weight, "weight defaults to 1")
	require.False(t, list.Data[0].Enabled)
	require.Equal(t, m1, list.Data[1].EmailAccountID)
	require.Equal(t, 5, list.Data[1].Weight)
	require.True(t, list.Data[1].LastSentAt.Value.Equal(sent))
	require.EqualValues(t, 1, campaignEvents(t, r, "campaign.updated", "change", "senders_replaced"))

	them := r.env.Bootstrap(t, "globex")
	foreign := uuid.New()
	orgExec(t, r.env, them.OrganizationID, `INSERT INTO mailboxes (organization_id, id, email, provider) VALUES ($1, $2, 'x@globex.example', 'smtp_imap')`,
		them.OrganizationID, foreign)
	for _, bad := range [][]api.CampaignSenderInput{
		{{EmailAccountID: m1, Weight: api.NewOptInt(0)}},
		{{EmailAccountID: m1, Weight: api.NewOptInt(101)}},
		{{EmailAccountID: m1}, {EmailAccountID: m1}},
		{{EmailAccountID: foreign}},
		{{EmailAccountID: uuid.New()}},
	} {
		_, err := r.replaceSenders(t, cmp.ID, bad...)
		requireAPIError(t, err, 400, "invalid_senders")
	}
	list, err = r.c.CampaignsListSenders(context.Background(), api.CampaignsListSendersParams{ID: cmp.ID})
	require.NoError(t, err)
	require.Len(t, list.Data, 2, "a refused replace changes nothing")
}

func TestAnActiveExplicitCampaignPausesWhenItsPoolEmpties(t *testing.T) {
	t.Parallel()
	r := newCampaignRig(t)
	ctx := context.Background()
	tag := uuid.New()
	orgExec(t, r.env, r.org, `INSERT INTO labels (organization_id, id, kind, title, color) VALUES ($1, $2, 'tag', 'Sales', '#123456')`, r.org, tag)
	m1 := r.mailbox(t, "one@acme.example")
	r.mailbox(t, "tagged@acme.example", tag)
	explicit := api.NewOptCampaignCreateSenderStrategy(api.CampaignCreateSenderStrategyExplicit)
	senders := []api.CampaignSenderInput{{EmailAccountID: m1}}

	// Only disabled senders left: nothing to send from, so the campaign pauses and says why.
	cmp := r.campaign(t, api.CampaignCreate{Name: "Explicit", SenderStrategy: explicit, Senders: senders})
	require.Equal(t, api.CampaignSenderStrategyExplicit, r.activate(t, cmp.ID).SenderStrategy.Value, "a PATCH keeps what it does not send")
	_, err := r.replaceSenders(t, cmp.ID, api.CampaignSenderInput{EmailAccountID: m1, Enabled: api.NewOptBool(false)})
	require.NoError(t, err)
	require.Equal(t, api.CampaignStatusPausedNoAccounts, r.status(t, cmp.ID))
	require.EqualValues(t, 1, campaignEvents(t, r, "campaign.paused", "status", "paused_no_accounts"))
	require.EqualValues(t, 1, orgInt(t, r.env, r.org, `SELECT count(*) FROM campaign_logs WHERE organization_id = $1 AND campaign_id = $2
		AND event_type = 'status_changed' AND message LIKE '%paused_no_accounts%sender pool%'`, r.org, cmp.ID))
	require.EqualValues(t, 1, orgInt(t, r.env, r.org, `SELECT count(*) FROM campaigns WHERE organization_id = $1 AND id = $2
		AND paused_reason LIKE '%sender pool%'`, r.org, cmp.ID))

	// An empty list too; a paused campaign stays as it is.
	second := r.campaign(t, api.CampaignCreate{Name: "Emptied", SenderStrategy: explicit, Senders: senders})
	r.activate(t, second.ID)
	_, err = r.replaceSenders(t, second.ID)
	require.NoError(t, err)
	require.Equal(t, api.CampaignStatusPausedNoAccounts, r.status(t, second.ID))
	_, err = r.replaceSenders(t, second.ID)
	require.NoError(t, err)
	require.EqualValues(t, 2, campaignEvents(t, r, "campaign.paused", "status", "paused_no_accounts"), "no second pause")

	// A mailbox carrying the campaign's tag keeps an explicit pool alive; a draft never pauses.
	withTag := r.campaign(t, api.CampaignCreate{Name: "Tagged", SenderStrategy: explicit, Senders: senders, EmailTagIds: []uuid.UUID{tag}})
	r.activate(t, withTag.ID)
	_, err = r.replaceSenders(t, withTag.ID)
	require.NoError(t, err)
	require.Equal(t, api.CampaignStatusActive, r.status(t, withTag.ID))
	draft := r.campaign(t, api.CampaignCreate{Name: "Draft", SenderStrategy: explicit, Senders: senders})
	_, err = r.replaceSenders(t, draft.ID)
	require.NoError(t, err)
	require.Equal(t, api.CampaignStatusDraft, r.status(t, draft.ID))

	// The tags strategy falls back to every active mailbox and never pauses.
	tags := r.campaign(t, api.CampaignCreate{Name: "Tags", Senders: senders})
	r.activate(t, tags.ID)
	_, err = r.replaceSenders(t, tags.ID)
	require.NoError(t, err)
	require.Equal(t, api.CampaignStatusActive, r.status(t, tags.ID))

	// Foreign campaigns are not found; a read-only key cannot replace.
	them := r.env.Client(t, r.env.Bootstrap(t, "globex").APIKey)
	_, err = them.CampaignsListSenders(ctx, api.CampaignsListSendersParams{ID: cmp.ID})
	requireAPIError(t, err, 404, "campaign_not_found")
	_, err = them.CampaignsReplaceSenders(ctx, &api.CampaignSendersReplace{Senders: []api.CampaignSenderInput{}}, api.CampaignsReplaceSendersParams{ID: tags.ID})
	requireAPIError(t, err, 404, "campaign_not_found")
	reader := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadCampaigns))
	_, err = reader.CampaignsListSenders(ctx, api.CampaignsListSendersParams{ID: tags.ID})
	require.NoError(t, err)
	_, err = reader.CampaignsReplaceSenders(ctx, &api.CampaignSendersReplace{Senders: []api.CampaignSenderInput{}}, api.CampaignsReplaceSendersParams{ID: tags.ID})
	requireAPIError(t, err, 403, "missing_scope")
}
