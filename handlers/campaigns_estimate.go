package handlers

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/schedule"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// CampaignEstimates serves POST /campaigns-estimate: before a campaign exists, how many people its segments
// reach, how many mailboxes its sender tags resolve to, and how long sending takes (schedule.Estimate). It
// writes nothing, so it is its own group with only the pool, apart from the campaign writes. Permissions are
// checked by the route table.
type CampaignEstimates struct {
	pool      *pgxpool.Pool
	queries   *dbq.Queries
	authGrace time.Duration
}

// NewCampaignEstimates builds the estimate; authGrace is how long a mailbox domain may fail authentication
// before its mailboxes stop cold sending (OUTFLOW_DOMAIN_AUTH_GRACE), so such mailboxes add no capacity.
func NewCampaignEstimates(pool *pgxpool.Pool, authGrace time.Duration) *CampaignEstimates {
	return &CampaignEstimates{pool: pool, queries: dbq.New(), authGrace: authGrace}
}

// CampaignsEstimate counts the distinct contacts of the segments and the sendable mailboxes of the tags, reads
// what each mailbox has already sent toward its cap today, and projects the timeline. The contract enforces
// segment_ids 1 to 20, email_tag_ids at most 50, days 0 to 127 and daily_limit >= 0; ids are checked against
// the caller's organization here (a foreign id is unknown), the timezone must load.
func (h *CampaignEstimates) CampaignsEstimate(ctx context.Context, req *api.CampaignEstimateRequest) (*api.CampaignEstimate, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	loc, err := campaign.Location(req.Timezone.Or("UTC"))
	if err != nil {
		return nil, err
	}
	in := schedule.EstimateInput{DailyLimit: req.DailyLimit.Or(50), Days: schedule.Weekdays(req.Days.Or(31)), Location: loc, Now: time.Now()}
	if v, ok := req.StartDate.Get(); ok {
		in.Start = v
	}
	var allowed []uuid.UUID
	if p := auth.PrincipalFrom(ctx); p != nil && p.AllowedMailboxes != nil {
		allowed = append([]uuid.UUID{}, p.AllowedMailboxes...)
	}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		known, err := h.queries.CampaignEstimateSegmentsKnown(ctx, tx, dbq.CampaignEstimateSegmentsKnownParams{OrganizationID: org, Ids: req.SegmentIds})
		if err != nil {
			return err
		}
		if i := firstUnknown(req.SegmentIds, known); i >= 0 {
			return apierror.BadRequest("segment_not_found", fmt.Sprintf("segment_ids[%d] (%s) is not a segment of this organization.", i, req.SegmentIds[i])).
				WithFix("GET /segments lists the organization's segments.")
		}
		var tags []uuid.UUID
		if len(req.EmailTagIds) > 0 {
			known, err := h.queries.CampaignEstimateTagsKnown(ctx, tx, dbq.CampaignEstimateTagsKnownParams{OrganizationID: org, Ids: req.EmailTagIds})
			if err != nil {
				return err
			}
			if i := firstUnknown(req.EmailTagIds, known); i >= 0 {
				return apierror.BadRequest("tag_not_found", fmt.Sprintf("email_tag_ids[%d] (%s) is not a mailbox tag of this organization.", i, req.EmailTagIds[i])).
					WithFix("GET /tags lists the organization's mailbox tags.")
			}
			tags = req.EmailTagIds
		}
		n, err := contacts.Count(ctx, tx, org, contacts.Filter{AnySegmentIDs: distinct(req.SegmentIds)})
		if err != nil {
			return err
		}
		in.Recipients = int(n)
		in.Mailboxes, err = h.senders(ctx, tx, org, tags, allowed, in.Now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return estimateOf(schedule.Estimate(in)), nil
}

// senders are the capacity facts of the mailboxes a campaign with these tags would send from: sendable ones
// (CampaignEstimateMailboxes) whose domain is not blocked for failing authentication, each with what its
// counter already holds for its own local day.
func (h *CampaignEstimates) senders(ctx context.Context, tx pgx.Tx, org uuid.UUID, tags, allowed []uuid.UUID, now time.Time) ([]schedule.MailboxDay, error) {
	rows, err := h.queries.CampaignEstimateMailboxes(ctx, tx, dbq.CampaignEstimateMailboxesParams{OrganizationID: org, Tags: tags, OnlyIds: allowed})
	if err != nil {
		return nil, err
	}
	var out []schedule.MailboxDay
	var ids []uuid.UUID
	var days []time.Time
	for _, m := range rows {
		if mailbox.AuthBlocked(m, h.authGrace, now) {
			continue
		}
		out = append(out, schedule.MailboxDay{Cap: int(m.CampaignLimit)})
		ids = append(ids, m.ID)
		days = append(days, sending.MailboxDay(now, m.Timezone))
	}
	sent, err := h.queries.CampaignEstimateSentToday(ctx, tx, dbq.CampaignEstimateSentTodayParams{OrganizationID: org, MailboxIds: ids, Days: days})
	if err != nil {
		return nil, err
	}
	for _, s := range sent {
		out[slices.Index(ids, s.MailboxID)].SentToday = int(s.Capped)
	}
	return out, nil
}

// firstUnknown is the index of the first id of want that known lacks, or -1.
func firstUnknown(want, known []uuid.UUID) int {
	for i, id := range want {
		if !slices.Contains(known, id) {
			return i
		}
	}
	return -1
}

// distinct is ids without repeats, in their first order.
func distinct(ids []uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// estimateOf maps a projection to the API's estimate; the nil timeline fields are JSON nulls.
func estimateOf(p schedule.Projection) *api.CampaignEstimate {
	out := &api.CampaignEstimate{Recipients: p.Recipients, Mailboxes: p.Mailboxes, DailyCapacity: p.DailyCapacity,
		RemainingToday: p.RemainingToday, SendingDays: api.NilInt{Null: true}, EstimatedFinishAt: api.NilDateTime{Null: true}}
	if p.SendingDays != nil {
		out.SendingDays = api.NewNilInt(*p.SendingDays)
	}
	if p.EstimatedFinishAt != nil {
		out.EstimatedFinishAt = api.NewNilDateTime(*p.EstimatedFinishAt)
	}
	return out
}
