package contacts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// LeadCounts are one campaign's leads among the contacts a filter selects: what a search naming exactly one
// campaign shows beside its first page, so a person sees how the campaign goes for the list they look at.
type LeadCounts struct {
	Total int
	// By status (see LeadStatusSQL): queued is pending, processing is active.
	Queued, Processing, Completed, Replied, Bounced, Failed, Paused, Undeliverable, Unsubscribed int
	// Engagement: leads sent at least one step, opened by a person, clicked, replied at any time.
	Contacted, Opened, Clicked, RepliedAny int
}

// CountLeads counts the campaign's leads among the contacts f selects, in one statement (LeadCountsSQL).
func CountLeads(ctx context.Context, q Querier, org uuid.UUID, f Filter, campaign uuid.UUID) (LeadCounts, error) {
	sql, args, err := LeadCountsSQL(ctx, q, org, f, campaign)
	if err != nil {
		return LeadCounts{}, err
	}
	var c LeadCounts
	if err := q.QueryRow(ctx, sql, args...).Scan(&c.Total, &c.Queued, &c.Processing, &c.Completed, &c.Replied, &c.Bounced,
		&c.Failed, &c.Paused, &c.Undeliverable, &c.Unsubscribed, &c.Contacted, &c.Opened, &c.Clicked, &c.RepliedAny); err != nil {
		return LeadCounts{}, fmt.Errorf("lead counts: %w", err)
	}
	return c, nil
}
