package batch_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/batch"
)

// recorder keeps the batches a writer wrote.
type recorder struct {
	mu      sync.Mutex
	batches [][]int
	fail    bool
	failed  []int
}

func (r *recorder) write(b []int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return errors.New("database down")
	}
	r.batches = append(r.batches, append([]int(nil), b...))
	return nil
}

func TestAWriterWritesInBatchesOfItsSizeAndFlushWaitsForEverythingOfferedBefore(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	w := batch.New(batch.Options[int]{Queue: 10, Size: 3, Interval: time.Hour, Write: r.write})
	for i := range 7 {
		require.True(t, w.Offer(i))
	}
	go w.Run()
	require.NoError(t, w.Flush(context.Background()))
	require.Equal(t, [][]int{{0, 1, 2}, {3, 4, 5}, {6}}, r.batches)
	require.NoError(t, w.Stop(context.Background()))
	require.ErrorIs(t, w.Flush(context.Background()), batch.ErrStopped)
}

func TestAWriterRefusesOffersBeyondItsQueueAndWritesWhatWaitsWhenItStops(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	w := batch.New(batch.Options[int]{Queue: 2, Size: 10, Interval: time.Hour, Write: r.write})
	require.True(t, w.Offer(1))
	require.True(t, w.Offer(2))
	require.False(t, w.Offer(3), "the queue is full")
	go w.Run()
	require.NoError(t, w.Stop(context.Background()))
	require.Equal(t, [][]int{{1, 2}}, r.batches)
}

func TestAWriterWritesAPartialBatchAfterItsInterval(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	w := batch.New(batch.Options[int]{Queue: 10, Size: 10, Interval: 10 * time.Millisecond, Write: r.write})
	go w.Run()
	defer func() { require.NoError(t, w.Stop(context.Background())) }()
	require.True(t, w.Offer(1))
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.batches) == 1
	}, 5*time.Second, 5*time.Millisecond)
}

func TestAFailedBatchIsReportedToFailedAndToTheFlushThatWaitedForIt(t *testing.T) {
	t.Parallel()
	r := &recorder{fail: true}
	w := batch.New(batch.Options[int]{Queue: 10, Size: 10, Interval: time.Hour, Write: r.write,
		Failed: func(n int, err error) { r.failed = append(r.failed, n) }})
	go w.Run()
	require.True(t, w.Offer(1))
	require.True(t, w.Offer(2))
	require.Error(t, w.Flush(context.Background()))
	require.Equal(t, []int{2}, r.failed)
	require.NoError(t, w.Stop(context.Background()))
}
