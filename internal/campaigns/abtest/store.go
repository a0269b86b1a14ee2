package abtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
)

// LogPromoted is the activity-log event type of a promotion.
const LogPromoted = "ab_winner_promoted"

var queries = dbq.New()

// Load reads what each of the campaign's variants' sends did, oldest variant first; variants without sends
// count zeros. It does not check that the campaign exists (Read and Promote do).
func Load(ctx context.Context, tx pgx.Tx, org, campaignID uuid.UUID) ([]Counts, error) {
	rows, err := queries.CampaignVariantCounts(ctx, tx, dbq.CampaignVariantCountsParams{OrganizationID: org, CampaignID: campaignID})
	if err != nil {
		return nil, err
	}
	out := make([]Counts, len(rows))
	for i, r := range rows {
		out[i] = Counts{VariantID: r.ID, Name: r.Name, StepID: r.StepID, IsControl: r.IsControl, IsActive: r.IsActive,
			Promoted: r.PromotedAt != nil, Sent: r.Sent, Opened: r.Opened, Clicked: r.Clicked, Replied: r.Replied,
			Bounced: r.Bounced, Rejected: r.Rejected}
	}
	return out, nil
}

// Report is a campaign's A/B analysis: its variants' counts, the decision, and the ab_testing block it was
// decided by (default_winning_rule and min_sample_size; Promote reads whether it may act).
type Report struct {
	CampaignID uuid.UUID
	Settings   campaign.ABTesting
	Variants   []Counts
	Decision   Decision
}

// Read analyses the campaign's variants by its ab_testing block (the block's defaults where it was never
// set). An unknown campaign, another organization's included, is campaign_not_found.
func Read(ctx context.Context, tx pgx.Tx, org, campaignID uuid.UUID) (Report, error) {
	row, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: campaignID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Report{}, campaign.NotFound()
	}
	if err != nil {
		return Report{}, err
	}
	o, err := campaign.Advanced(campaign.Campaign{Campaign: row})
	if err != nil {
		return Report{}, err
	}
	ab := o.ABTesting
	variants, err := Load(ctx, tx, org, campaignID)
	if err != nil {
		return Report{}, err
	}
	return Report{CampaignID: campaignID, Settings: ab, Variants: variants,
		Decision: Decide(variants, ab.DefaultWinningRule, int(ab.MinSampleSize))}, nil
}

// Promote stamps promoted_at on the winner of every group that has one and no promoted variant yet, when the
// campaign's ab_testing block is enabled with auto_promote_winner, and writes an ab_winner_promoted line to the
// activity log for each. The sequence engine calls it after recording sends and from then on sends only a
// group's promoted variant. It is idempotent: a group promoted before is left as it is, whatever its counts say
// now. Answers the verdicts it promoted (none when nothing changed).
func Promote(ctx context.Context, tx pgx.Tx, org, campaignID uuid.UUID, now time.Time) ([]Verdict, error) {
	r, err := Read(ctx, tx, org, campaignID)
	if err != nil || !r.Settings.Enabled || !r.Settings.AutoPromoteWinner {
		return nil, err
	}
	var done []Verdict
	locked := false
	for _, g := range r.Decision.Groups {
		if g.Winner == nil || promotedIn(r.Variants, g.StepID) {
			continue
		}
		if !locked {
			// Serializes promotions of this campaign: the stamp below then sees any promotion committed
			// since the counts were read.
			if _, err := queries.CampaignGetForUpdate(ctx, tx, dbq.CampaignGetForUpdateParams{OrganizationID: org, ID: campaignID}); err != nil {
				return nil, err
			}
			locked = true
		}
		n, err := queries.CampaignVariantPromote(ctx, tx, dbq.CampaignVariantPromoteParams{PromotedAt: now,
			OrganizationID: org, CampaignID: campaignID, ID: g.Winner.VariantID})
		if err != nil {
			return nil, err
		}
		if n == 0 {
			continue
		}
		if err := logPromotion(ctx, tx, org, campaignID, r, g, now); err != nil {
			return nil, err
		}
		done = append(done, g)
	}
	return done, nil
}

// promotedIn says a variant of the group of step is promoted already.
func promotedIn(variants []Counts, step uuid.NullUUID) bool {
	for _, v := range variants {
		if v.StepID == step && v.Promoted {
			return true
		}
	}
	return false
}

// logPromotion writes the activity-log line of one promotion: who won, by which rule, against whom and how
// surely, in words a person reads and in metadata a program reads.
func logPromotion(ctx context.Context, tx pgx.Tx, org, campaignID uuid.UUID, r Report, g Verdict, now time.Time) error {
	rule := r.Settings.DefaultWinningRule
	w, ru := *g.Winner, *g.RunnerUp
	wx, _ := hits(w, rule)
	rx, _ := hits(ru, rule)
	scope := "the campaign-level variants"
	if g.StepID.Valid {
		scope = "its step's variants"
	}
	msg := fmt.Sprintf("Variant %q won among %s by %s: %d of %d sends (%.2f%%) against %q's %d of %d (%.2f%%), "+
		"z = %.2f, %s confidence. Only it is sent from now on.", w.Name, scope, rule, wx, w.Sent, 100*Rate(wx, w.Sent),
		ru.Name, rx, ru.Sent, 100*Rate(rx, ru.Sent), g.Z, g.Confidence)
	meta, err := json.Marshal(map[string]any{
		"variant_id": w.VariantID, "variant_name": w.Name, "step_id": g.StepID, "winning_rule": rule,
		"confidence": g.Confidence, "z": math.Round(g.Z*100) / 100, "min_sample_size": r.Settings.MinSampleSize, "promoted_at": now.UTC(),
		"winner":    map[string]any{"sent": w.Sent, "hits": wx, "rate": Rate(wx, w.Sent)},
		"runner_up": map[string]any{"variant_id": ru.VariantID, "variant_name": ru.Name, "sent": ru.Sent, "hits": rx, "rate": Rate(rx, ru.Sent)},
	})
	if err != nil {
		return err
	}
	return campaign.Log(ctx, tx, org, campaignID, uuid.NullUUID{}, LogPromoted, msg, meta)
}
