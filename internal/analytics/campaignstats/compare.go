package campaignstats

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// MaxCompared is how many campaigns one comparison reads.
const MaxCompared = 10

// CompareIDs parses the comparison's comma-separated ids: entries that are not UUIDs (and empty ones) are
// dropped, a repeated id counts once, and what remains must be 1 to MaxCompared ids. The limit counts the
// valid distinct ids, since dropped entries are never read.
func CompareIDs(raw string) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for entry := range strings.SplitSeq(raw, ",") {
		id, err := uuid.Parse(strings.TrimSpace(entry))
		if err != nil || seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	switch {
	case len(ids) == 0:
		return nil, apierror.BadRequest("invalid_ids", "ids must name at least one campaign by its id (comma-separated UUIDs).")
	case len(ids) > MaxCompared:
		return nil, apierror.BadRequest("too_many_ids",
			fmt.Sprintf("ids names %d campaigns; at most %d can be compared at once.", len(ids), MaxCompared))
	}
	return ids, nil
}

// Compared is one campaign of a comparison with its counters over the range.
type Compared struct {
	ID           uuid.UUID
	Name, Status string
	metrics.Counters
}

// Compare reads the campaigns ids (CompareIDs) over the days first..last (a checked Range), in the order
// given. Every id must be one of org's campaigns: the first that is not answers NotFound.
func Compare(ctx context.Context, tx pgx.Tx, org uuid.UUID, ids []uuid.UUID, first, last time.Time) ([]Compared, error) {
	rows, err := queries.AnalyticsCampaignsCompare(ctx, tx, dbq.AnalyticsCampaignsCompareParams{OrganizationID: org, Ids: ids,
		First: first, Last: last})
	if err != nil {
		return nil, err
	}
	found := make(map[uuid.UUID]bool, len(rows))
	out := make([]Compared, len(rows))
	for i, r := range rows {
		found[r.ID] = true
		out[i] = Compared{ID: r.ID, Name: r.Name, Status: r.Status, Counters: metrics.Counters{Sent: r.Sent, Opens: r.Opens,
			MachineOpens: r.MachineOpens, Clicks: r.Clicks, MachineClicks: r.MachineClicks, Replies: r.Replies,
			BouncesHard: r.BouncesHard, BouncesSoft: r.BouncesSoft}}
	}
	for _, id := range ids {
		if !found[id] {
			return nil, NotFound(id)
		}
	}
	return out, nil
}
