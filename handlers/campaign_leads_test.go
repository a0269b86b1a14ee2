package handlers_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/platform/db"
)

func TestCampaignLogsPageNewestFirstByEntryID(t *testing.T) {
	t.Parallel()
	r := newAdvRig(t)
	ctx := context.Background()
	other := r.campaign(t, api.CampaignCreate{Name: "Other"}).ID
	require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		for i := range 5 {
			if err := campaign.Log(ctx, tx, r.org, r.camp, uuid.NullUUID{}, "note", "entry "+string(rune('a'+i)), []byte(`{"n":`+string(rune('0'+i))+`}`)); err != nil {
				return err
			}
		}
		return campaign.Log(ctx, tx, r.org, other, uuid.NullUUID{}, "note", "elsewhere", nil)
	}))

	var messages []string
	var cursor api.OptString
	for page := 0; ; page++ {
		list, err := r.c.CampaignsListLogs(ctx, api.CampaignsListLogsParams{ID: r.camp, Limit: api.NewOptInt(2), Cursor: cursor})
		require.NoError(t, err)
		require.Equal(t, int64(5), list.Pagination.Total.Value)
		for _, l := range list.Data {
			require.Equal(t, r.camp, l.CampaignID)
			messages = append(messages, l.Message.Value)
		}
		if !list.Pagination.HasMore {
			require.Equal(t, 2, page)
			require.Len(t, list.Data, 1)
			require.False(t, list.Pagination.NextCursor.Set)
			break
		}
		require.Len(t, list.Data, 2)
		require.Equal(t, list.Data[1].ID.String(), list.Pagination.NextCursor.Value, "the cursor is the last entry's id")
		cursor = api.NewOptString(list.Pagination.NextCursor.Value)
	}
	require.Equal(t, []string{"entry e", "entry d", "entry c", "entry b", "entry a"}, messages)
	first, err := r.c.CampaignsListLogs(ctx, api.CampaignsListLogsParams{ID: r.camp, Limit: api.NewOptInt(1)})
	require.NoError(t, err)
	require.Equal(t, "4", string(first.Data[0].Metadata.Value["n"]))

	_, err = r.c.CampaignsListLogs(ctx, api.CampaignsListLogsParams{ID: r.camp, Cursor: api.NewOptString("page-2")})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_cursor")
	for _, q := range []string{"limit=0", "limit=101"} {
		res := r.env.Do(t, http.MethodGet, "/v1/campaigns/"+r.camp.String()+"/logs?"+q, r.key, nil, nil)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, q)
		require.NoError(t, res.Body.Close())
	}
	_, err = r.c.CampaignsListLogs(ctx, api.CampaignsListLogsParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
}
