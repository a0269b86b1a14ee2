package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/outflowhq/outflow/internal/eventing/delivery"
)

// webhookAttemptWorker makes one webhook delivery attempt (delivery.Deliverer.Attempt).
type webhookAttemptWorker struct {
	river.WorkerDefaults[delivery.AttemptArgs]
	deliverer *delivery.Deliverer
}

func (w *webhookAttemptWorker) Work(ctx context.Context, job *river.Job[delivery.AttemptArgs]) error {
	wait, err := w.deliverer.Attempt(ctx, job.Args)
	if errors.Is(err, delivery.ErrEndpointBusy) {
		var meta struct {
			Snoozes int `json:"snoozes"`
		}
		_ = json.Unmarshal(job.Metadata, &meta)
		return river.JobSnooze(delivery.BusyWait(meta.Snoozes))
	}
	if err != nil {
		return err
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}

// Timeout leaves the HTTP exchange its full delivery.RequestTimeout plus the claim and the record, and stays
// below delivery.Lease, so a running attempt never loses its claim.
func (w *webhookAttemptWorker) Timeout(*river.Job[delivery.AttemptArgs]) time.Duration {
	return delivery.RequestTimeout + 30*time.Second
}

// webhookSweepWorker re-enqueues stalled deliveries and trims rate windows (delivery.Deliverer.Sweep).
type webhookSweepWorker struct {
	river.WorkerDefaults[delivery.SweepArgs]
	deliverer *delivery.Deliverer
}

func (w *webhookSweepWorker) Work(ctx context.Context, _ *river.Job[delivery.SweepArgs]) error {
	if _, err := w.deliverer.Sweep(ctx); err != nil {
		return fmt.Errorf("sweep webhook deliveries: %w", err)
	}
	return nil
}

// webhookChallengeWorker challenges an OAuth app's new managed endpoint (delivery.Deliverer.Challenge); an
// endpoint removed or repointed meanwhile is left alone.
type webhookChallengeWorker struct {
	river.WorkerDefaults[delivery.ChallengeArgs]
	deliverer *delivery.Deliverer
}

func (w *webhookChallengeWorker) Work(ctx context.Context, job *river.Job[delivery.ChallengeArgs]) error {
	_, err := w.deliverer.Challenge(ctx, job.Args.OrganizationID, job.Args.EndpointID, job.Args.URL)
	if errors.Is(err, delivery.ErrEndpointGone) {
		return nil
	}
	return err
}
