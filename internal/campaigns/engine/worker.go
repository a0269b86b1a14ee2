package engine

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// Args is the engine's periodic job: plan every campaign with due leads.
type Args struct{}

// Kind names the job.
func (Args) Kind() string { return "campaign_engine" }

// InsertOpts inserts at most one run per Interval: a run goes on until nothing is due, so a second one in the
// same interval would find nothing. Uniqueness is by period, not by state, so a run whose worker was killed
// (still "running" until River rescues it) does not hold the next ones back.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: Interval}}
}

// Worker works Args.
type Worker struct {
	river.WorkerDefaults[Args]
	Engine *Engine
}

// Timeout bounds one run; the passes it finished are committed, and what is left is due for the next run.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return time.Minute }

// Work runs the due campaigns, enqueueing sends and events through the worker's River client.
func (w *Worker) Work(ctx context.Context, _ *river.Job[Args]) error {
	_, err := w.Engine.RunDue(ctx, river.ClientFromContext[pgx.Tx](ctx))
	return err
}
