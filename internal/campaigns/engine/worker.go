package engine

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Args is the engine's periodic job: plan every campaign with due leads.
type Args struct{}

// Kind names the job.
func (Args) Kind() string { return "campaign_engine" }

// InsertOpts keeps one run queued or running at a time: a run goes on until nothing is due, so a second one
// queued behind it would find nothing.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateRunning,
		rivertype.JobStateScheduled}}}
}

// Worker works Args.
type Worker struct {
	river.WorkerDefaults[Args]
	Engine *Engine
}

// Timeout bounds one run; the passes it finished are committed, and what is left is due for the next run.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return 5 * time.Minute }

// Work runs the due campaigns, enqueueing sends and events through the worker's River client.
func (w *Worker) Work(ctx context.Context, _ *river.Job[Args]) error {
	_, err := w.Engine.RunDue(ctx, river.ClientFromContext[pgx.Tx](ctx))
	return err
}
