package handlers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/abtest"
)

// CampaignsGetAbAnalysis answers each variant's counts and rates and the campaign's A/B decision by its
// ab_testing block.
func (h *Campaigns) CampaignsGetAbAnalysis(ctx context.Context, params api.CampaignsGetAbAnalysisParams) (*api.ABWinnerAnalysis, error) {
	var r abtest.Report
	err := h.inOrg(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (err error) {
		r, err = abtest.Read(ctx, tx, org, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return abAnalysisAPI(r), nil
}

// abAnalysisAPI maps an A/B report.
func abAnalysisAPI(r abtest.Report) *api.ABWinnerAnalysis {
	out := &api.ABWinnerAnalysis{CampaignID: r.CampaignID, Variants: make([]api.ABWinnerAnalysisVariantsItem, len(r.Variants)),
		WinnerID: api.OptNilUUID{Set: true, Null: true}, WinnerName: api.OptNilString{Set: true, Null: true},
		WinningRule: api.NewOptString(r.Settings.DefaultWinningRule), Confidence: api.NewOptString(r.Decision.Confidence)}
	for i, v := range r.Variants {
		rates := v.Rates()
		out.Variants[i] = api.ABWinnerAnalysisVariantsItem{VariantID: api.NewOptUUID(v.VariantID), VariantName: api.NewOptString(v.Name),
			TotalSent: api.NewOptInt(int(v.Sent)), Opened: api.NewOptInt(int(v.Opened)), Clicked: api.NewOptInt(int(v.Clicked)),
			Replied: api.NewOptInt(int(v.Replied)), Bounced: api.NewOptInt(int(v.Bounced)), OpenRate: api.NewOptFloat64(rates.Open),
			ClickRate: api.NewOptFloat64(rates.Click), ReplyRate: api.NewOptFloat64(rates.Reply), BounceRate: api.NewOptFloat64(rates.Bounce)}
	}
	if w := r.Decision.Winner; w != nil {
		out.WinnerID, out.WinnerName = api.NewOptNilUUID(w.VariantID), api.NewOptNilString(w.Name)
	}
	return out
}
