package handlers_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// campLeadEmails counts a campaign's lead rows by contact email, and requires every one to be pending.
func campLeadEmails(t *testing.T, env *apitest.Env, org, id uuid.UUID) map[string]int {
	t.Helper()
	out := map[string]int{}
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT c.email, l.state FROM campaign_leads l JOIN contacts c ON c.organization_id = l.organization_id
  AND c.id = l.contact_id WHERE l.organization_id = $1 AND l.campaign_id = $2`, org, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var email, state string
			if err := rows.Scan(&email, &state); err != nil {
				return err
			}
			require.Equal(t, "pending", state, email)
			out[email]++
		}
		return rows.Err()
	}))
	return out
}

// segLinksFixture is an organization with contacts a to e: a static segment pinning a, b and c, and a dynamic
// one matching c and d (industry mathematics); e is in neither.
type segLinksFixture struct {
	env             *apitest.Env
	c               *api.Client
	org             uuid.UUID
	cs              []api.Contact
	static, dynamic *api.Segment
}

func newSegLinks(t *testing.T) segLinksFixture {
	t.Helper()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	cs := segContacts(t, c, "a@example.com", "b@example.com", "c@example.com", "d@example.com", "e@example.com")
	for _, ct := range cs[2:4] {
		_, err := c.ContactsUpdate(context.Background(), &api.ContactUpdate{CustomFields: api.NewOptContactUpdateCustomFields(
			api.ContactUpdateCustomFields{"industry": "mathematics"})}, api.ContactsUpdateParams{ID: ct.ID})
		require.NoError(t, err)
	}
	static := segCreate(t, c, api.SegmentCreate{Name: "Static"})
	segAdd(t, c, static.ID, api.ContactSelection{Contacts: []uuid.UUID{cs[0].ID, cs[1].ID, cs[2].ID}})
	dynamic := segCreate(t, c, api.SegmentCreate{Name: "Mathematicians", Kind: api.NewOptSegmentCreateKind(api.SegmentCreateKindDynamic),
		Filters: api.NewOptContactSearchRequest(mathematicians())})
	return segLinksFixture{env: env, c: c, org: boot.OrganizationID, cs: cs, static: static, dynamic: dynamic}
}

func TestCampaignCreateWithSegmentsEnrollsEveryMemberOnce(t *testing.T) {
	t.Parallel()
	f := newSegLinks(t)
	camp := campCreate(t, f.c, api.CampaignCreate{Name: "Linked", SegmentIds: []uuid.UUID{f.static.ID, f.dynamic.ID}})
	require.Equal(t, []uuid.UUID{f.static.ID, f.dynamic.ID}, camp.SegmentIds)
	require.Equal(t, []uuid.UUID{f.static.ID, f.dynamic.ID}, campGet(t, f.c, camp.ID).SegmentIds)
	require.Equal(t, map[string]int{"a@example.com": 1, "b@example.com": 1, "c@example.com": 1, "d@example.com": 1},
		campLeadEmails(t, f.env, f.org, camp.ID), "c is in both segments and is one lead; e is in neither")

	plain := campCreate(t, f.c, api.CampaignCreate{Name: "Unlinked"})
	require.Empty(t, plain.SegmentIds)
	require.Empty(t, campLeadEmails(t, f.env, f.org, plain.ID))
}

func TestCampaignSegmentIDsMustBeSegmentsOfTheOrganization(t *testing.T) {
	t.Parallel()
	f := newSegLinks(t)
	ctx := context.Background()
	other := f.env.Bootstrap(t, "globex")
	foreign := segCreate(t, f.env.Client(t, other.APIKey), api.SegmentCreate{Name: "Theirs"})
	for _, ids := range [][]uuid.UUID{{f.static.ID, uuid.New()}, {foreign.ID}} {
		_, err := f.c.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Bad", SegmentIds: ids}, api.CampaignsCreateParams{})
		requireAPIError(t, err, http.StatusBadRequest, "invalid_segment_ids")
	}
	camp := campCreate(t, f.c, api.CampaignCreate{Name: "Good"})
	_, err := f.c.CampaignsUpdate(ctx, &api.CampaignUpdate{SegmentIds: []uuid.UUID{foreign.ID}}, api.CampaignsUpdateParams{ID: camp.ID})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_segment_ids")
	require.Empty(t, campGet(t, f.c, camp.ID).SegmentIds)
	require.Empty(t, campLeadEmails(t, f.env, f.org, camp.ID), "a refused create or update enrolls nobody")
}

func TestCampaignUpdateReplacesTheSegmentsAndEnrollsTheNewMembers(t *testing.T) {
	t.Parallel()
	f := newSegLinks(t)
	ctx := context.Background()
	camp := campCreate(t, f.c, api.CampaignCreate{Name: "Linked", SegmentIds: []uuid.UUID{f.static.ID}})
	require.Len(t, campLeadEmails(t, f.env, f.org, camp.ID), 3)

	res, err := f.c.CampaignsUpdate(ctx, &api.CampaignUpdate{SegmentIds: []uuid.UUID{f.dynamic.ID}}, api.CampaignsUpdateParams{ID: camp.ID})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{f.dynamic.ID}, campaignUpdatedOK(t, res).SegmentIds)
	require.Equal(t, map[string]int{"a@example.com": 1, "b@example.com": 1, "c@example.com": 1, "d@example.com": 1},
		campLeadEmails(t, f.env, f.org, camp.ID), "d joins from the new segment; the static segment's leads stay")

	// An update that does not send segment_ids keeps them; an empty array unlinks them all.
	res, err = f.c.CampaignsUpdate(ctx, &api.CampaignUpdate{Name: api.NewOptString("Renamed")}, api.CampaignsUpdateParams{ID: camp.ID})
	require.NoError(t, err)
	up := campaignUpdatedOK(t, res)
	require.Equal(t, []uuid.UUID{f.dynamic.ID}, up.SegmentIds)
	res, err = f.c.CampaignsUpdate(ctx, &api.CampaignUpdate{SegmentIds: []uuid.UUID{}}, api.CampaignsUpdateParams{ID: camp.ID})
	require.NoError(t, err)
	up = campaignUpdatedOK(t, res)
	require.Empty(t, up.SegmentIds)
	require.Len(t, campLeadEmails(t, f.env, f.org, camp.ID), 4)
}

func TestPeriodicEnrolmentAddsContactsThatJoinedALinkedSegment(t *testing.T) {
	t.Parallel()
	f := newSegLinks(t)
	ctx := context.Background()
	camp := campCreate(t, f.c, api.CampaignCreate{Name: "Linked", SegmentIds: []uuid.UUID{f.static.ID, f.dynamic.ID}})
	unlinked := campCreate(t, f.c, api.CampaignCreate{Name: "Unlinked"})
	require.Len(t, campLeadEmails(t, f.env, f.org, camp.ID), 4)

	// e is pinned into the static segment and f starts matching the dynamic one after the links were made,
	// both by a person (an API key's pin or change enrolls at once, see lead_gate_segments_test.go and
	// lead_gate_dynamic_test.go).
	person := f.env.Owner(t, "acme")
	segAdd(t, person, f.static.ID, api.ContactSelection{Contacts: []uuid.UUID{f.cs[4].ID}})
	late := segContacts(t, f.c, "f@example.com")[0]
	_, err := person.ContactsUpdate(ctx, &api.ContactUpdate{CustomFields: api.NewOptContactUpdateCustomFields(
		api.ContactUpdateCustomFields{"industry": "mathematics"})}, api.ContactsUpdateParams{ID: late.ID})
	require.NoError(t, err)
	require.Len(t, campLeadEmails(t, f.env, f.org, camp.ID), 4, "nothing joins before the job runs")

	// Links enrolled after the cut-off wait for a later run.
	_, err = campaign.EnrollDue(ctx, f.env.DB.Pool, time.Now().Add(-time.Hour), 10000)
	require.NoError(t, err)
	require.Len(t, campLeadEmails(t, f.env, f.org, camp.ID), 4)

	_, err = campaign.EnrollDue(ctx, f.env.DB.Pool, time.Now().Add(time.Minute), 10000)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"a@example.com": 1, "b@example.com": 1, "c@example.com": 1, "d@example.com": 1,
		"e@example.com": 1, "f@example.com": 1}, campLeadEmails(t, f.env, f.org, camp.ID))
	require.Empty(t, campLeadEmails(t, f.env, f.org, unlinked.ID))
}

func TestCampaignDuplicateCopiesTheSegmentLinks(t *testing.T) {
	t.Parallel()
	f := newSegLinks(t)
	src := campCreate(t, f.c, api.CampaignCreate{Name: "Linked", SegmentIds: []uuid.UUID{f.dynamic.ID, f.static.ID}})
	cp, err := f.c.CampaignsDuplicate(context.Background(), api.OptCampaignDuplicateRequest{}, api.CampaignsDuplicateParams{ID: src.ID})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{f.dynamic.ID, f.static.ID}, cp.SegmentIds)
	require.Len(t, campLeadEmails(t, f.env, f.org, cp.ID), 4, "the copy enrolls its segments' members")
}

func TestDeletingASegmentDropsItsCampaignLinksAndKeepsTheLeads(t *testing.T) {
	t.Parallel()
	f := newSegLinks(t)
	camp := campCreate(t, f.c, api.CampaignCreate{Name: "Linked", SegmentIds: []uuid.UUID{f.static.ID, f.dynamic.ID}})
	require.NoError(t, f.c.SegmentsDelete(context.Background(), api.SegmentsDeleteParams{ID: f.static.ID}))
	require.Equal(t, []uuid.UUID{f.dynamic.ID}, campGet(t, f.c, camp.ID).SegmentIds)
	require.Len(t, campLeadEmails(t, f.env, f.org, camp.ID), 4)
}
