// Package jobs wires River, the Postgres-backed queue that carries every piece of background work in
// Outflow: it registers the workers, the queues and the periodic jobs, and builds the client that API
// processes use to enqueue (inside their transactions) and worker processes use to work.
package jobs
