package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
)

type longArgs struct{}

func (longArgs) Kind() string { return "long" }

type longWorker struct {
	river.WorkerDefaults[longArgs]
	timeout time.Duration
}

func (w *longWorker) Timeout(*river.Job[longArgs]) time.Duration { return w.timeout }

func (w *longWorker) Work(context.Context, *river.Job[longArgs]) error { return nil }

// TestRegisterRefusesTimeoutsPastTheRescuePromise: a worker that may run longer than MaxJobTimeout (or
// forever) would leave a job killed with its process running that long, so it is refused by name.
func TestRegisterRefusesTimeoutsPastTheRescuePromise(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		timeout time.Duration
		ok      bool
	}{{0, true}, {MaxJobTimeout, true}, {MaxJobTimeout + time.Second, false}, {-1, false}} {
		r := &registry{workers: river.NewWorkers()}
		register(r, &longWorker{timeout: tc.timeout})
		if tc.ok {
			require.NoError(t, r.err, tc.timeout)
		} else {
			require.ErrorContains(t, r.err, "long declares a timeout", tc.timeout)
		}
	}
	require.Less(t, JobTimeout, RescueStuckJobsAfter, "a live job is canceled before it could be rescued")
	require.LessOrEqual(t, max(RescueStuckJobsAfter, MaxJobTimeout), 5*time.Minute, "a few minutes")
}
