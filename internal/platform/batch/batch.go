package batch

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Options configure a Writer.
type Options[T any] struct {
	// Queue is how many items wait for the writer before Offer refuses.
	Queue int
	// Size is the most items one Write gets.
	Size int
	// Interval is the longest an offered item waits for its batch.
	Interval time.Duration
	// Write stores one batch. It owns the slice only for the call.
	Write func([]T) error
	// Failed is told each batch Write failed to store, with its length (it logs; nil tells no one).
	Failed func(n int, err error)
}

// Writer queues items and writes them in batches on its own goroutine. Build it with New, start it with
// Run (in a goroutine), end it with Stop.
type Writer[T any] struct {
	o       Options[T]
	queue   chan T
	flushes chan chan error
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// ErrStopped is Flush's answer once the writer has stopped.
var ErrStopped = errors.New("batch: writer stopped")

// New builds a writer whose goroutine is not running yet (tests fill its queue first).
func New[T any](o Options[T]) *Writer[T] {
	return &Writer[T]{o: o, queue: make(chan T, o.Queue), flushes: make(chan chan error), stop: make(chan struct{}),
		done: make(chan struct{})}
}

// Offer queues v without waiting and reports whether there was room.
func (w *Writer[T]) Offer(v T) bool {
	select {
	case w.queue <- v:
		return true
	default:
		return false
	}
}

// Flush writes every item offered before the call and returns the errors of the batches that held them.
func (w *Writer[T]) Flush(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case w.flushes <- reply:
	case <-w.done:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop writes what is queued and ends the writer, waiting for it until ctx ends. Items offered later wait
// for nothing: they are never written.
func (w *Writer[T]) Stop(ctx context.Context) error {
	err := w.Flush(ctx)
	if errors.Is(err, ErrStopped) {
		err = nil
	}
	w.once.Do(func() { close(w.stop) })
	select {
	case <-w.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run is the writer's loop; it returns once Stop has drained the queue.
func (w *Writer[T]) Run() {
	defer close(w.done)
	ticker := time.NewTicker(w.o.Interval)
	defer ticker.Stop()
	batch := make([]T, 0, w.o.Size)
	write := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := w.o.Write(batch)
		if err != nil && w.o.Failed != nil {
			w.o.Failed(len(batch), err)
		}
		clear(batch) // drop references to written items
		batch = batch[:0]
		return err
	}
	add := func(v T) error {
		batch = append(batch, v)
		if len(batch) == w.o.Size {
			return write()
		}
		return nil
	}
	drain := func() error {
		var errs error
		for {
			select {
			case v := <-w.queue:
				errs = errors.Join(errs, add(v))
			default:
				return errors.Join(errs, write())
			}
		}
	}
	for {
		select {
		case v := <-w.queue:
			_ = add(v)
		case <-ticker.C:
			_ = write()
		case reply := <-w.flushes:
			reply <- drain()
		case <-w.stop:
			_ = drain()
			return
		}
	}
}
