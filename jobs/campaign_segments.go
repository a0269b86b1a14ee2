package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
)

// SegmentEnrollArgs is the periodic job that adds the new members of linked segments (contacts pinned since,
// contacts a dynamic segment's filters started matching) to their campaigns as pending leads.
type SegmentEnrollArgs struct{}

// Kind names the segment enrolment job in River.
func (SegmentEnrollArgs) Kind() string { return "campaign_segment_enroll" }

// InsertOpts retries a failed run a few times; enrolment only adds missing leads, so an overlap is harmless.
func (SegmentEnrollArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3}
}

type segmentEnrollWorker struct {
	river.WorkerDefaults[SegmentEnrollArgs]
	pool *pgxpool.Pool
}

// Timeout is MaxJobTimeout: a run enrolls up to campaign.SegmentEnrollBatch campaigns, each one statement
// over its segments' members. A run cut short has committed the campaigns it finished; the rest stay due.
func (w *segmentEnrollWorker) Timeout(*river.Job[SegmentEnrollArgs]) time.Duration {
	return MaxJobTimeout
}

// Work enrolls the campaigns whose links were last enrolled more than half an interval ago, so links just
// set through the API (enrolled then) wait for a later run.
func (w *segmentEnrollWorker) Work(ctx context.Context, _ *river.Job[SegmentEnrollArgs]) error {
	before := time.Now().Add(-campaign.SegmentEnrollInterval / 2)
	if _, err := campaign.EnrollDue(ctx, w.pool, before, campaign.SegmentEnrollBatch); err != nil {
		return fmt.Errorf("enroll segment members: %w", err)
	}
	return nil
}
