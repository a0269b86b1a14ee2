package deliverability

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

// Rate rules: the rolling window of sends read, the sends it needs before it judges (so the first bounce of a
// small campaign is not a spike), and the share of the pause threshold where the early-warning band starts.
// Outflow's choices: the seeds give only the thresholds.
const (
	rateWindow       = 7 * 24 * time.Hour
	minSample        = 20
	warningBandShare = 0.5
)

// metric is one of the rates a campaign is judged on.
type metric struct {
	// name is the metric as campaign.deliverability_warning names it; counted its count's key in that event.
	name, counted string
	// what names the events in a pause's reason.
	what string
	// threshold is the metric's pause threshold in the bounce_pipeline block.
	threshold func(campaign.BouncePipeline) float64
	// count is the metric's count in the window.
	count func(dbq.DeliverabilityWindowRow) int32
}

var (
	bounceRate = metric{name: "bounce_rate", counted: "bounced", what: "bounce",
		threshold: func(b campaign.BouncePipeline) float64 { return b.PauseBounceRateThreshold },
		count:     func(w dbq.DeliverabilityWindowRow) int32 { return w.Bounced }}
	complaintRate = metric{name: "complaint_rate", counted: "complained", what: "complaint",
		threshold: func(b campaign.BouncePipeline) float64 { return b.PauseComplaintRateThreshold },
		count:     func(w dbq.DeliverabilityWindowRow) int32 { return w.Complained }}
)

// judge judges the campaign's rolling rate of the metric after one more event of it was counted: entering the
// early-warning band raises campaign.deliverability_warning; reaching the threshold pauses an active campaign
// when the bounce_pipeline block says so, with the reason stated. The campaign is locked first (after the
// lead, as the engine's completion takes it), so two events judged at once see each other's counts.
func (e *effects) judge(ctx context.Context, m metric) error {
	if e.row == nil {
		return nil
	}
	threshold := m.threshold(e.block)
	if !e.block.Enabled || threshold <= 0 {
		return nil
	}
	row, err := queries.CampaignGetForUpdate(ctx, e.tx, dbq.CampaignGetForUpdateParams{OrganizationID: e.row.OrganizationID, ID: e.row.ID})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	w, err := queries.DeliverabilityWindow(ctx, e.tx, dbq.DeliverabilityWindowParams{OrganizationID: row.OrganizationID,
		CampaignID: row.ID, Since: e.now.Add(-rateWindow)})
	if err != nil || w.Sends < minSample {
		return err
	}
	n := m.count(w)
	before := float64(n-1) / float64(w.Sends)
	after := float64(n) / float64(w.Sends)
	band := threshold * warningBandShare
	if before < band && after >= band {
		if _, err := e.outbox.Emit(ctx, e.tx, events.CampaignDeliverabilityWarning, map[string]any{
			"campaign_id": row.ID, "campaign_name": row.Name, "metric": m.name, "rate": after, "threshold": threshold,
			"sends": w.Sends, m.counted: n}); err != nil {
			return err
		}
	}
	if !e.block.AutoPauseCampaignOnSpike || after < threshold || row.Status != campaign.StatusActive {
		return nil
	}
	reason := fmt.Sprintf("its %s rate reached %s of its last %d sends (threshold %s)", m.what, percent(after), w.Sends,
		percent(threshold))
	if _, err := campaign.NewStore(e.outbox, 0, e.r.now).Move(ctx, e.tx, row, campaign.StatusPaused, reason); err != nil {
		return err
	}
	return campaign.NotifyPaused(ctx, e.tx, e.outbox.Jobs(), row, reason)
}

// percent writes a rate as a percentage with the precision its size needs (5%, 0.3%, 0.15%).
func percent(rate float64) string {
	p := rate * 100
	switch {
	case p >= 1:
		return fmt.Sprintf("%.1f%%", p)
	case p >= 0.1:
		return fmt.Sprintf("%.2f%%", p)
	}
	return fmt.Sprintf("%.3f%%", p)
}
