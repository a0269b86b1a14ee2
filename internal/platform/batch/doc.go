// Package batch is the background writer behind the records a request leaves without waiting for the
// database: the API-key usage log and the tracking events. Handlers offer items, which never blocks; one
// goroutine writes them in batches, every Interval or every Size items, whichever comes first.
//
// # Invariants
//
//   - Offer never blocks: it queues the item or reports that the queue is full (the caller decides what a full
//     queue means: drop and count, or write on its own).
//   - Flush returns once every item offered before it is written (or failed), with the batches' errors.
//   - Stop writes what is queued, then ends the writer; a write failure is reported to Failed and loses that
//     batch only.
package batch
